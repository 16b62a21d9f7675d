package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// frame is one record read from a capture.
type frame struct {
	ci       gopacket.CaptureInfo
	data     []byte
	linkType gplayers.LinkType
}

// packetMode prints every RDMA packet: a line (-P), a header tree (-V), an
// NDJSON object or a CSV row. Files are read one after the other.
func (r *runner) packetMode(ctx context.Context, files []string) int {
	status := ExitOK
	var cw *csv.Writer
	if r.cfg.output == "csv" {
		cw = csv.NewWriter(r.stdout)
		_ = cw.Write(packetCSVHeader)
	}
	enc := json.NewEncoder(r.stdout)
	for _, name := range files {
		a := analyze.New(r.options(name, len(files) > 1))
		var start time.Time
		var n uint64
		err := r.each(ctx, name, func(f *frame) {
			n++
			p := a.Feed(f.ci, f.linkType, f.data)
			if n == 1 {
				start = p.Time
			}
			if !p.IsRDMA || (p.BTH != nil && !r.selects(p.Src.String(), p.Dst.String(), p.BTH.DestQP)) {
				return
			}
			if p.BTH == nil && (r.cfg.qp >= 0 || r.cfg.flow != nil) {
				return
			}
			if r.out.err() != nil {
				return // the output failed: Run reports it
			}
			rel := p.Time.Sub(start)
			defer r.out.frameDone()
			switch {
			case r.cfg.output == "json":
				_ = enc.Encode(packetObject(p))
			case cw != nil:
				_ = cw.Write(packetCSVRow(p, rel))
			case r.cfg.verbose:
				r.writeTree(p, f, rel)
			default:
				r.writeLine(p, rel)
			}
		})
		if err != nil {
			fmt.Fprintf(r.stderr, "roce-dissect: %s: %v\n", displayName(name), err)
			status = ExitDamaged
		}
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			r.outputError(err)
			return ExitDamaged
		}
	}
	return status
}

// summary returns the key header fields of a packet as "k=v" words.
func summary(p *analyze.Packet) string {
	var b strings.Builder
	bth := p.BTH
	fmt.Fprintf(&b, "%s QP=%s PSN=%d", bth.OpcodeName(), qpString(bth.DestQP), bth.PSN)
	if bth.AckReq {
		b.WriteString(" A")
	}
	if bth.SolicitedEvent {
		b.WriteString(" SE")
	}
	if bth.FECN {
		b.WriteString(" FECN")
	}
	if bth.BECN {
		b.WriteString(" BECN")
	}
	if p.ECN == 3 {
		b.WriteString(" ECN-CE")
	}
	if h := p.DETH; h != nil {
		fmt.Fprintf(&b, " QKey=0x%08x SrcQP=%s", h.QKey, qpString(h.SrcQP))
	}
	if h := p.DCETH; h != nil {
		fmt.Fprintf(&b, " DCETH=0x%08x:%08x", h.Word0, h.Word1)
	}
	if h := p.RETH; h != nil {
		fmt.Fprintf(&b, " VA=0x%016x RKey=0x%08x DMALen=%d", h.VA, h.RKey, h.DMALength)
	}
	if h := p.AtomicETH; h != nil {
		fmt.Fprintf(&b, " VA=0x%016x RKey=0x%08x SwapAdd=0x%x Compare=0x%x", h.VA, h.RKey, h.SwapOrAdd, h.Compare)
	}
	if h := p.AETH; h != nil {
		fmt.Fprintf(&b, " %s MSN=%d", strings.ReplaceAll(h.SyndromeString(), " ", ":"), h.MSN)
	}
	if h := p.AtomicAckETH; h != nil {
		fmt.Fprintf(&b, " OrigData=0x%x", h.OrigRemoteData)
	}
	if h := p.ImmDt; h != nil {
		fmt.Fprintf(&b, " Imm=0x%08x", h.Immediate)
	}
	if h := p.IETH; h != nil {
		fmt.Fprintf(&b, " InvRKey=0x%08x", h.RKey)
	}
	if mad := p.MADLayer; mad != nil {
		fmt.Fprintf(&b, " MAD %s %s %s", mad.Header.MgmtClass, mad.Header.Method, mad.Header.AttributeName())
		if req, ok := mad.CM().(*cm.ConnectRequest); ok {
			fmt.Fprintf(&b, " LocalQPN=%s StartPSN=%d MTU=%s", qpString(req.LocalQPN), req.StartingPSN, req.PathMTU)
		}
		if rep, ok := mad.CM().(*cm.ConnectReply); ok {
			fmt.Fprintf(&b, " LocalQPN=%s StartPSN=%d", qpString(rep.LocalQPN), rep.StartingPSN)
		}
	}
	if p.PayloadLen >= 0 {
		fmt.Fprintf(&b, " len=%d", p.PayloadLen)
	}
	return b.String()
}

func (r *runner) writeLine(p *analyze.Packet, rel time.Duration) {
	pal := r.pal
	if p.BTH == nil {
		fmt.Fprintf(r.stdout, "%6d %.9f %s → %s %s\n", p.Frame, rel.Seconds(), p.Src, p.Dst, pal.red.Sprintf("malformed: %v", p.Err))
		return
	}
	icrc := icrcWord(pal, p)
	mark := ""
	if p.Findings > 0 {
		mark = pal.yellow.Sprint(" !")
	}
	fmt.Fprintf(r.stdout, "%6d %.9f %s → %s %s %s%s\n", p.Frame, rel.Seconds(), p.Src, p.Dst, summary(p), icrc, mark)
}

func icrcWord(pal palette, p *analyze.Packet) string {
	switch p.ICRC.Status {
	case layers.ICRCOK:
		if p.SrcPortRewritten {
			return pal.green.Sprintf("ICRC=ok(src port %d)", p.OriginalSrcPort)
		}
		return pal.green.Sprint("ICRC=ok")
	case layers.ICRCBad:
		return pal.red.Sprintf("ICRC=bad(%s, expected %s)", layers.ICRCWire(p.ICRC.Value), layers.ICRCWire(p.ICRC.Expected))
	}
	return "ICRC=unverifiable"
}

// writeTree prints every header of a packet with all its fields, decoding
// the frame again through gopacket (the analyzer's fast path keeps only
// the IB headers).
func (r *runner) writeTree(p *analyze.Packet, f *frame, rel time.Duration) {
	w := r.stdout
	r.pal.bold.Fprintf(w, "Frame %d: %d bytes on wire, %d captured, %.9f s", p.Frame, p.Length, p.CapLength, rel.Seconds())
	if p.Findings > 0 {
		r.pal.yellow.Fprintf(w, " (%s)", plural(p.Findings, "finding"))
	}
	fmt.Fprintln(w)
	pkt := gopacket.NewPacket(f.data, f.linkType, gopacket.DecodeOptions{NoCopy: true})
	for _, l := range pkt.Layers() {
		name := l.LayerType().String()
		if raw, ok := l.(*gopacket.Payload); ok {
			fmt.Fprintf(w, "  %s: %d bytes\n", name, len(*raw))
			continue
		}
		if writeCRC(w, l) {
			if p.SrcPortRewritten && l.LayerType() == layers.LayerTypeICRC {
				fmt.Fprintf(w, "    Verified with UDP source port %d (the capture tool wrote 4791)\n", p.OriginalSrcPort)
			}
			continue
		}
		fmt.Fprintf(w, "  %s\n", name)
		writeFields(w, "    ", reflect.ValueOf(l), 0)
	}
	if b, ok := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH); ok && p.BTH != nil && b.DC != p.BTH.DC {
		// gopacket.NewPacket decodes the RD opcodes automatically only.
		r.pal.yellow.Fprintf(w, "  (--decode-as %s: analyzed as %s; the tree above is the automatic decoding)\n", r.cfg.rdAs, p.BTH.OpcodeName())
	}
	if p.Err != nil {
		r.pal.red.Fprintf(w, "  malformed: %v\n", p.Err)
	}
	fmt.Fprintln(w)
}

// writeCRC prints an ICRC or VCRC layer with its values as the bytes on
// the wire, as -P, -o json and Wireshark show them (the layers hold the
// CRC value, which the wire carries least significant byte first); false
// for other layers.
func writeCRC(w io.Writer, l gopacket.Layer) bool {
	var value, expected string
	var status layers.ICRCStatus
	switch c := l.(type) {
	case *layers.ICRC:
		value, expected, status = layers.ICRCWire(c.Value), layers.ICRCWire(c.Expected), c.Status
	case *layers.VCRC:
		value, expected, status = layers.VCRCWire(c.Value), layers.VCRCWire(c.Expected), c.Status
	default:
		return false
	}
	fmt.Fprintf(w, "  %s\n    Value: %s\n    Status: %s\n", l.LayerType(), value, status)
	if status == layers.ICRCBad || status == layers.ICRCOK {
		fmt.Fprintf(w, "    Expected: %s\n", expected)
	}
	return true
}

// writeFields prints the exported fields of a layer struct.
func writeFields(w io.Writer, indent string, v reflect.Value, depth int) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || depth > 3 {
		return
	}
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Name == "BaseLayer" || sf.Name == "Contents" || sf.Name == "Payload" {
			continue
		}
		fv := v.Field(i)
		if sf.Anonymous {
			writeFields(w, indent, fv, depth)
			continue
		}
		if s, ok := fieldString(fv); ok {
			fmt.Fprintf(w, "%s%s: %s\n", indent, sf.Name, s)
			continue
		}
		inner := fv
		for inner.Kind() == reflect.Pointer || inner.Kind() == reflect.Interface {
			if inner.IsNil() {
				break
			}
			inner = inner.Elem()
		}
		if inner.Kind() == reflect.Struct && !inner.IsZero() {
			fmt.Fprintf(w, "%s%s:\n", indent, sf.Name)
			writeFields(w, indent+"  ", inner, depth+1)
		}
	}
}

// fieldString renders a scalar field; false for structs.
func fieldString(v reflect.Value) (string, bool) {
	if e := v; e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface {
		for (e.Kind() == reflect.Pointer || e.Kind() == reflect.Interface) && !e.IsNil() {
			e = e.Elem()
		}
		if e.Kind() == reflect.Struct {
			return "", false // a nested header or message: printed as a subtree
		}
	}
	if v.CanInterface() {
		if s, ok := v.Interface().(fmt.Stringer); ok && v.Kind() != reflect.Struct && !(v.Kind() == reflect.Pointer && v.IsNil()) {
			return s.String(), true
		}
	}
	switch v.Kind() {
	case reflect.Bool:
		return fmt.Sprint(v.Bool()), true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return fmt.Sprintf("%d (0x%x)", v.Uint(), v.Uint()), true
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return fmt.Sprint(v.Int()), true
	case reflect.String:
		return v.String(), true
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() == 0 {
				return "none", true
			}
			b := make([]byte, v.Len())
			for i := range b {
				b[i] = byte(v.Index(i).Uint())
			}
			if len(b) > 32 {
				return fmt.Sprintf("%x… (%d bytes)", b[:32], len(b)), true
			}
			return fmt.Sprintf("%x", b), true
		}
		return fmt.Sprintf("%d items", v.Len()), true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "none", true
		}
	}
	return "", false
}
