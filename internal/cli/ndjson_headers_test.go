package cli_test

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// ndFull is the part of a `-P -o json` line these tests read.
type ndFull struct {
	Frame   int       `json:"frame"`
	Time    time.Time `json:"time"`
	RelTime float64   `json:"time_relative_seconds"`
	File    string    `json:"file"`
	Src     string    `json:"src"`
	Dst     string    `json:"dst"`
	BTH     *struct {
		Opcode uint8  `json:"opcode"`
		PSN    uint32 `json:"psn"`
		DestQP uint32 `json:"dest_qp"`
	} `json:"bth"`
	ECN *struct {
		Value uint8  `json:"value"`
		Name  string `json:"name"`
	} `json:"ecn"`
	LRH *struct {
		VL     uint8  `json:"vl"`
		SL     uint8  `json:"sl"`
		LNH    uint8  `json:"lnh"`
		DLID   uint16 `json:"dlid"`
		PktLen uint16 `json:"pkt_len_words"`
		SLID   uint16 `json:"slid"`
	} `json:"lrh"`
	GRH *struct {
		TClass uint8  `json:"tclass"`
		PayLen uint16 `json:"pay_len"`
		HopLmt uint8  `json:"hop_lmt"`
		SGID   string `json:"sgid"`
		DGID   string `json:"dgid"`
	} `json:"grh"`
	VCRC *struct {
		Status string `json:"status"`
		Value  string `json:"value"`
	} `json:"vcrc"`
	CNP *struct {
		Reserved string `json:"reserved"`
	} `json:"cnp"`
	MAD *struct {
		CM *struct {
			RDMACM *struct {
				SrcIP   string `json:"src_ip"`
				SrcPort uint16 `json:"src_port"`
				DstIP   string `json:"dst_ip"`
				DstPort uint16 `json:"dst_port"`
			} `json:"rdma_cm"`
		} `json:"cm"`
	} `json:"mad"`
	Findings     int      `json:"findings"`
	FindingKinds []string `json:"finding_kinds"`
}

func ndLines(t *testing.T, out string) []ndFull {
	t.Helper()
	var all []ndFull
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var p ndFull
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p), sc.Text())
		all = append(all, p)
	}
	return all
}

// TestPacketJSONAgainstGenerator: the ECN, CNP body and finding kinds of
// each `-P -o json` line are those the generator wrote (its FrameInfo):
// CE on the marked frames and ecn_ce among their findings, a zero CNP
// body on the CNPs, and Not-ECT elsewhere.
func TestPacketJSONAgainstGenerator(t *testing.T) {
	cfg, _, _, err := synth.ParseArgs([]string{"write-bw", "--nanos", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "200", "--ecn", "201,204,205"})
	require.NoError(t, err)
	var infos []synth.FrameInfo
	cfg.OnFrame = func(fi *synth.FrameInfo) { c := *fi; c.Data = nil; infos = append(infos, c) }
	var capBuf, truthBuf bytes.Buffer
	_, err = synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ecn.pcap")
	require.NoError(t, os.WriteFile(path, capBuf.Bytes(), 0o644))

	code, out, errs := run(t, nil, "-P", "-o", "json", path)
	require.Equal(t, 0, code, errs)
	lines := ndLines(t, out)
	require.Len(t, lines, len(infos))
	marked := 0
	for i, fi := range infos {
		p := lines[i]
		require.Equal(t, fi.Index, p.Frame)
		assert.True(t, fi.Timestamp.Equal(p.Time), "frame %d", p.Frame)
		assert.InDelta(t, fi.Timestamp.Sub(infos[0].Timestamp).Seconds(), p.RelTime, 1e-12)
		assert.Equal(t, uint8(fi.Opcode), p.BTH.Opcode)
		assert.Equal(t, fi.PSN, p.BTH.PSN)
		require.NotNil(t, p.ECN, "frame %d", p.Frame)
		if fi.ECNCE {
			marked++
			assert.Equal(t, "CE", p.ECN.Name)
			assert.Equal(t, uint8(3), p.ECN.Value)
			assert.Contains(t, p.FindingKinds, "ecn_ce")
		} else {
			assert.NotEqual(t, "CE", p.ECN.Name, "frame %d", p.Frame)
		}
		if fi.Opcode == 0x81 {
			require.NotNil(t, p.CNP, "frame %d", p.Frame)
			assert.Equal(t, strings.Repeat("0", 32), p.CNP.Reserved)
			assert.Contains(t, p.FindingKinds, "cnp")
		} else {
			assert.Nil(t, p.CNP)
		}
		assert.Len(t, p.FindingKinds, p.Findings, "one kind per finding")
		if fi.CM == "REQ" {
			require.NotNil(t, p.MAD.CM.RDMACM)
			assert.Equal(t, fi.Src, p.MAD.CM.RDMACM.SrcIP)
			assert.Equal(t, fi.Dst, p.MAD.CM.RDMACM.DstIP)
		}
	}
	assert.Equal(t, 3, marked)
}

// TestPacketJSONAgainstTshark: ecn, lrh, grh and vcrc of `-P -o json`
// hold the values tshark shows, frame by frame.
func TestPacketJSONAgainstTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	tests := []struct {
		file   string
		fields []string
		check  func(t *testing.T, p ndFull, ws []string)
	}{
		{"../../testdata/ecn_cnp.pcap", []string{"ip.dsfield.ecn"}, func(t *testing.T, p ndFull, ws []string) {
			require.NotNil(t, p.ECN)
			assert.Equal(t, ws[0], strconv.Itoa(int(p.ECN.Value)))
		}},
		{"../../testdata/erf.pcap", []string{"infiniband.lrh.vl", "infiniband.lrh.sl", "infiniband.lrh.lnh", "infiniband.lrh.dlid", "infiniband.lrh.slid", "infiniband.lrh.pktlen", "infiniband.variant.crc"},
			func(t *testing.T, p ndFull, ws []string) {
				require.NotNil(t, p.LRH)
				got := []uint64{uint64(p.LRH.VL), uint64(p.LRH.SL), uint64(p.LRH.LNH), uint64(p.LRH.DLID), uint64(p.LRH.SLID), uint64(p.LRH.PktLen)}
				for i, g := range got {
					w, err := strconv.ParseUint(ws[i], 0, 16)
					require.NoError(t, err)
					assert.Equal(t, w, g, "tshark %s", ws[i])
				}
				assert.Equal(t, ws[6], p.VCRC.Value)
				assert.Equal(t, "ok", p.VCRC.Status)
				assert.Nil(t, p.ECN, "no ECN without IP or GRH")
			}},
		{"../../testdata/rocev1.pcap", []string{"infiniband.grh.tclass", "infiniband.grh.paylen", "infiniband.grh.hoplmt", "infiniband.grh.sgid", "infiniband.grh.dgid"},
			func(t *testing.T, p ndFull, ws []string) {
				require.NotNil(t, p.GRH)
				tc, err := strconv.ParseUint(ws[0], 0, 8)
				require.NoError(t, err)
				assert.Equal(t, []string{num(tc), ws[1], ws[2], ws[3], ws[4]},
					[]string{num(uint64(p.GRH.TClass)), num(uint64(p.GRH.PayLen)), num(uint64(p.GRH.HopLmt)), p.GRH.SGID, p.GRH.DGID})
				assert.Equal(t, uint8(tc&3), p.ECN.Value, "ECN from the GRH traffic class")
			}},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			args := []string{"-r", tc.file, "-n", "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"}
			for _, f := range tc.fields {
				args = append(args, "-e", f)
			}
			ws, err := exec.Command(tshark, args...).Output()
			require.NoError(t, err)
			code, out, errs := run(t, nil, "-P", "-o", "json", tc.file)
			require.Equal(t, 0, code, errs)
			lines := ndLines(t, out)
			rows := strings.Split(strings.TrimSpace(string(ws)), "\n")
			require.Len(t, lines, len(rows))
			for i, row := range rows {
				tc.check(t, lines[i], strings.Split(row, "|"))
			}
		})
	}
}

// TestPacketRowsNameTheirFile: with several files each JSON line and CSV
// row says its file (frame numbers restart at 1 in each), and JSON and
// CSV give the same absolute and relative times.
func TestPacketRowsNameTheirFile(t *testing.T) {
	a, b := "../../testdata/ecn_cnp.pcap", "../../testdata/rocev1.pcap"
	code, out, errs := run(t, nil, "-P", "-o", "json", a, b)
	require.Equal(t, 0, code, errs)
	lines := ndLines(t, out)
	code, csvOut, errs := run(t, nil, "-P", "-o", "csv", a, b)
	require.Equal(t, 0, code, errs)
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	require.NoError(t, err)
	head := rows[0]
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("no CSV column %s", name)
		return -1
	}
	require.Len(t, rows[1:], len(lines))
	files := map[string]int{}
	for i, p := range lines {
		row := rows[i+1]
		files[p.File]++
		assert.Equal(t, p.File, row[col("file")])
		assert.Equal(t, strconv.Itoa(p.Frame), row[col("frame")])
		tm, err := time.Parse(time.RFC3339Nano, row[col("time")])
		require.NoError(t, err)
		assert.True(t, tm.Equal(p.Time), "CSV time is absolute like JSON's")
		rel, err := strconv.ParseFloat(row[col("time_relative_seconds")], 64)
		require.NoError(t, err)
		assert.InDelta(t, p.RelTime, rel, 1e-9)
	}
	want := map[string]int{}
	for _, f := range []string{a, b} {
		var tr synth.Truth
		data, err := os.ReadFile(f + ".truth.json")
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &tr))
		want[f] = tr.RoCEPackets
	}
	assert.Equal(t, want, files, "each file's packets (the generator's truth) under its name")
	assert.Equal(t, 1, lines[0].Frame)
	// One file: no file key.
	_, out, _ = run(t, nil, "-P", "-o", "json", "-c", "1", a)
	assert.NotContains(t, out, `"file"`)
}
