package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/report"
)

// frame is one record read from a capture.
type frame struct {
	ci       gopacket.CaptureInfo
	data     []byte
	linkType gplayers.LinkType
	file     int    // the index of its file in the source (readSource)
	num      uint64 // its number in its file
	// ahead is its reader's Ahead (nil when none): the frames after it
	// that the reader holds, whose flows an Analyzer can read into the
	// caches before it is fed them (prefetcher).
	ahead func(dst [][]byte) [][]byte
}

// prefetcher returns what a feed calls before it feeds every
// aheadEvery-th frame (f.num%aheadEvery == 1): while a reads ahead at all
// (analyze.Analyzer.Prefetches), a.Prefetch of the frame and those after
// it that its reader holds.
func prefetcher(a *analyze.Analyzer) func(*frame) {
	buf := make([][]byte, 0, aheadEvery)
	return func(f *frame) {
		if f.ahead != nil && a.Prefetches() {
			a.Prefetch(f.linkType, f.ahead(append(buf[:0], f.data)))
		}
	}
}

// aheadEvery is how often a feed reads ahead, and for how many frames:
// analyze.Analyzer.Prefetch reads the flows of up to 16 at once.
const aheadEvery = 16

// packetMode prints every RDMA packet: a line (-P), a header tree (-V), an
// NDJSON object or a CSV row. Files are read one after the other.
func (r *runner) packetMode(ctx context.Context, files []string) int {
	status := ExitOK
	out := packetOutput{enc: json.NewEncoder(r.stdout)}
	if r.cfg.output == "csv" {
		out.cw = csv.NewWriter(r.stdout)
		_ = out.cw.Write(slices.Concat(packetCSVHeader, packetCSVExtraHeader, packetCSVWrapHeader, packetCSVICRCHeader))
	}
	for _, name := range files {
		if err := r.packetFile(ctx, name, len(files) > 1, out); err != nil {
			fmt.Fprintf(r.stderr, "roce-dissect: %s: %v\n", displayName(name), err)
			status = ExitDamaged
		}
	}
	if out.cw != nil {
		out.cw.Flush()
		if err := out.cw.Error(); err != nil {
			r.outputError(err)
			return ExitDamaged
		}
	}
	return status
}

// packetOutput is where packetMode's objects and rows go: the NDJSON
// encoder, and the CSV writer when the output is CSV (nil otherwise).
type packetOutput struct {
	enc *json.Encoder
	cw  *csv.Writer
}

// packetFile prints the packets of the capture file name that
// listsPacket selects, with its name when several files are read, and
// their times from the file's first frame.
func (r *runner) packetFile(ctx context.Context, name string, several bool, out packetOutput) error {
	a := r.budget.New(r.options(oneFile(name), several))
	fileLabel := ""
	if several {
		fileLabel = fileName(name)
	}
	var start time.Time
	var n uint64
	var col *nccl.Collector // -P and -V mark NCCL's packets
	if r.cfg.output == "text" {
		col = nccl.NewCollector()
	}
	return r.each(ctx, name, func(f *frame) {
		n++
		p := a.Feed(f.ci, f.linkType, f.data)
		if col != nil {
			col.Add(p)
		}
		if n == 1 {
			start = p.Time
		}
		if !r.listsPacket(p) {
			return
		}
		if r.out.err() != nil {
			return // the output failed: Run reports it
		}
		rel := p.Time.Sub(start)
		defer r.out.frameDone()
		r.printPacket(out, a, p, f, rel, fileLabel, ncclMark(col))
	})
}

// listsPacket reports whether packetMode prints p: an RDMA packet the
// selection (--qp, --flow) takes, or a pause frame, which is listed
// too unless --qp or --flow select RDMA packets.
func (r *runner) listsPacket(p *analyze.Packet) bool {
	switch {
	case p.MACControl != nil:
		return r.cfg.qp < 0 && r.cfg.flow == nil
	case !p.IsRDMA || (p.BTH != nil && !r.selects(p.Src.String(), p.Dst.String(), p.BTH.DestQP)):
		return false
	case p.BTH == nil && (r.cfg.qp >= 0 || r.cfg.flow != nil):
		return false
	}
	return true
}

// printPacket prints p, frame f, at rel from the file's first frame, in
// the output's form: an NDJSON object, a CSV row, a header tree (-V) or
// a line, with a hex dump under -x for the last two; the last two end in
// nc, what the packet is to NCCL (ncclMark), when it is something.
func (r *runner) printPacket(out packetOutput, a *analyze.Analyzer, p *analyze.Packet, f *frame, rel time.Duration, fileLabel, nc string) {
	pause := p.MACControl != nil
	switch {
	case r.cfg.output == "json":
		o := packetObject(p)
		addHeaders(o, p, rel, fileLabel, r.frameFindings(a))
		if pause {
			r.pauseFrameObject(o, p, f)
		}
		_ = out.enc.Encode(o)
	case out.cw != nil:
		row := packetCSVRow(p, rel)
		if pause {
			row[2], row[3] = frameMACs(f)
		}
		_ = out.cw.Write(slices.Concat(row, packetCSVExtra(p, rel, fileLabel, r.frameFindings(a)), packetCSVWrap(p), packetCSVICRC(p)))
	case r.cfg.verbose:
		r.writeTree(p, f, rel, fileLabel, nc, r.frameFindings(a))
		if r.cfg.hex {
			writeHexDump(r.stdout, f.data)
		}
		fmt.Fprintln(r.stdout)
	default:
		r.writeLine(p, rel, nc, r.marked(p, a))
		if r.cfg.hex {
			writeHexDump(r.stdout, f.data)
			fmt.Fprintln(r.stdout)
		}
	}
}

// summary returns the key header fields of a packet as "k=v" words.
func summary(p *analyze.Packet) string {
	var b strings.Builder
	bth := p.BTH
	fmt.Fprintf(&b, "%s QP=%s PSN=%d", bth.OpcodeName(), report.QP(bth.DestQP), bth.PSN)
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
		fmt.Fprintf(&b, " QKey=0x%08x SrcQP=%s", h.QKey, report.QP(h.SrcQP))
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
			fmt.Fprintf(&b, " LocalQPN=%s StartPSN=%d MTU=%s", report.QP(req.LocalQPN), req.StartingPSN, req.PathMTU)
		}
		if rep, ok := mad.CM().(*cm.ConnectReply); ok {
			fmt.Fprintf(&b, " LocalQPN=%s StartPSN=%d", report.QP(rep.LocalQPN), rep.StartingPSN)
		}
	}
	if p.PayloadLen >= 0 {
		fmt.Fprintf(&b, " len=%d", p.PayloadLen)
	}
	if len(p.Wraps) > 0 {
		fmt.Fprintf(&b, " [in %s]", wrapWords(p.Wraps))
	}
	return b.String()
}

// writeLine prints p as one line (-P): its summary, ICRC, nc (what it is
// to NCCL, when something) and " !" when marked (its frame has findings).
func (r *runner) writeLine(p *analyze.Packet, rel time.Duration, nc string, marked bool) {
	pal := r.pal
	if p.MACControl != nil {
		fmt.Fprintf(r.stdout, "%6d %.9f %s\n", p.Frame, rel.Seconds(), pauseSummary(p.MACControl, r.cfg.linkGbps*1e9))
		return
	}
	if p.BTH == nil {
		fmt.Fprintf(r.stdout, "%6d %.9f %s → %s %s\n", p.Frame, rel.Seconds(), p.Src, p.Dst, pal.Red.Sprintf("malformed: %v", p.Err))
		return
	}
	icrc := icrcWord(pal, p)
	mark := ""
	if nc != "" {
		mark = " " + nc
	}
	if marked {
		mark += pal.Yellow.Sprint(" !")
	}
	fmt.Fprintf(r.stdout, "%6d %.9f %s → %s %s %s%s\n", p.Frame, rel.Seconds(), p.Src, p.Dst, summary(p), icrc, mark)
}

func icrcWord(pal report.Palette, p *analyze.Packet) string {
	switch p.ICRC.Status {
	case layers.ICRCOK:
		if p.SrcPortRewritten {
			return pal.Green.Sprintf("ICRC=ok(src port %d)", p.OriginalSrcPort)
		}
		return pal.Green.Sprint("ICRC=ok")
	case layers.ICRCBad:
		return pal.Red.Sprintf("ICRC=bad(%s, expected %s)", layers.ICRCWire(p.ICRC.Value), layers.ICRCWire(p.ICRC.Expected))
	}
	return "ICRC=unverifiable"
}
