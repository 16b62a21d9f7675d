package synth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
)

// SplitNames returns the names of the pieces of out that --split writes:
// out's name with _00000, _00001… before its extension, as editcap -c
// names them (without the time).
func SplitNames(out string, pieces int) []string {
	ext := filepath.Ext(out)
	stem := strings.TrimSuffix(out, ext)
	names := make([]string, pieces)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%05d%s", stem, i, ext)
	}
	return names
}

// writeSplit generates cfg and writes it in pieces of cfg.Split frames
// (SplitNames), each a capture of its own in cfg's format, and the whole
// capture's truth to truth ("" for none).
func writeSplit(cfg Config, out, truth string) error {
	if out == "-" {
		return fmt.Errorf("synth: %w: --split writes files, not standard output", ErrConfig)
	}
	var capBuf, truthBuf bytes.Buffer
	if _, err := Generate(cfg, &capBuf, &truthBuf); err != nil {
		return err
	}
	var r interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var err error
	if cfg.Format == FormatPcapNG {
		r, err = pcapgo.NewNgReader(&capBuf, pcapgo.DefaultNgReaderOptions)
	} else {
		r, err = pcapgo.NewReader(&capBuf)
	}
	if err != nil {
		return fmt.Errorf("synth: --split: %w", err)
	}
	var frames [][]byte
	var infos []gopacket.CaptureInfo
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("synth: --split: %w", err)
		}
		frames, infos = append(frames, data), append(infos, ci)
	}
	for i, name := range SplitNames(out, (len(frames)+cfg.Split-1)/cfg.Split) {
		end := min(len(frames), (i+1)*cfg.Split)
		if err := writePiece(name, &cfg, frames[i*cfg.Split:end], infos[i*cfg.Split:end]); err != nil {
			return err
		}
	}
	if truth == "" {
		return nil
	}
	return os.WriteFile(truth, truthBuf.Bytes(), 0o644)
}

// writePiece writes frames to the capture file name.
func writePiece(name string, cfg *Config, frames [][]byte, infos []gopacket.CaptureInfo) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w, err := newCapWriter(f, cfg)
	if err != nil {
		return err
	}
	for k, data := range frames {
		if err := w.write(infos[k].Timestamp, data, infos[k].Length); err != nil {
			return err
		}
	}
	return w.flush()
}
