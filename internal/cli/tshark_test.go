package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// ndPacket is the part of a `-P -o json` line compared with tshark.
type ndPacket struct {
	Frame int `json:"frame"`
	BTH   *struct {
		Opcode uint64 `json:"opcode"`
		DestQP uint64 `json:"dest_qp"`
		PSN    uint64 `json:"psn"`
		AckReq bool   `json:"ack_req"`
		PKey   uint64 `json:"pkey"`
	} `json:"bth"`
	RETH *struct {
		VA        string `json:"va"`
		RKey      uint64 `json:"rkey"`
		DMALength uint64 `json:"dma_length"`
	} `json:"reth"`
	AtomicETH *struct {
		VA        string `json:"va"`
		RKey      uint64 `json:"rkey"`
		SwapOrAdd string `json:"swap_or_add"`
		Compare   string `json:"compare"`
	} `json:"atomiceth"`
	AETH *struct {
		Syndrome uint64 `json:"syndrome"`
		MSN      uint64 `json:"msn"`
	} `json:"aeth"`
	DETH *struct {
		QKey  uint64 `json:"qkey"`
		SrcQP uint64 `json:"src_qp"`
	} `json:"deth"`
	MAD *struct {
		CM *ndREQ `json:"cm"`
	} `json:"mad"`
}

// ndREQ is the CM object of a MAD; only REQs are compared.
type ndREQ struct {
	Type             string  `json:"type"`
	LocalQPN         *uint64 `json:"local_qpn"`
	StartingPSN      *uint64 `json:"starting_psn"`
	ServiceID        string  `json:"service_id"`
	PathMTU          *uint64 `json:"path_mtu"`
	PrimaryLocalGID  string  `json:"primary_local_gid"`
	PrimaryRemoteGID string  `json:"primary_remote_gid"`
	PrimaryLocalLID  *uint64 `json:"primary_local_lid"`
	PrimaryRemoteLID *uint64 `json:"primary_remote_lid"`
}

func (p *ndPacket) req() *ndREQ {
	if p.MAD == nil || p.MAD.CM == nil || p.MAD.CM.Type != "REQ" {
		return nil
	}
	return p.MAD.CM
}

// value kinds of a compared column.
const (
	kindNum  = iota // tshark prints a decimal or 0x hex number
	kindBool        // tshark prints 1 or 0
	kindGID         // an address; IPv4-mapped GIDs are shown as IPv4 by both
	kindMTU         // tshark prints the IBA MTU code (1–5), we print bytes
)

// tsharkColumn is one compared value: the tshark fields holding it (the
// first non-empty one is taken) and how to read it from our NDJSON line
// (ok false: absent from the packet).
type tsharkColumn struct {
	fields []string
	kind   int
	get    func(p *ndPacket) (v string, ok bool)
}

func num(v uint64) string { return strconv.FormatUint(v, 10) }

func optNum(v *uint64) (string, bool) {
	if v == nil {
		return "", false
	}
	return num(*v), true
}

var tsharkColumns = []tsharkColumn{
	{[]string{"infiniband.bth.opcode"}, kindNum, func(p *ndPacket) (string, bool) { return num(p.BTH.Opcode), true }},
	{[]string{"infiniband.bth.destqp"}, kindNum, func(p *ndPacket) (string, bool) { return num(p.BTH.DestQP), true }},
	{[]string{"infiniband.bth.psn"}, kindNum, func(p *ndPacket) (string, bool) { return num(p.BTH.PSN), true }},
	{[]string{"infiniband.bth.a"}, kindBool, func(p *ndPacket) (string, bool) { return strconv.FormatBool(p.BTH.AckReq), true }},
	{[]string{"infiniband.bth.p_key"}, kindNum, func(p *ndPacket) (string, bool) { return num(p.BTH.PKey), true }},
	// tshark 4.0 shows the AtomicETH's VA and R_Key with the RETH fields.
	{[]string{"infiniband.reth.va"}, kindNum, func(p *ndPacket) (string, bool) {
		switch {
		case p.RETH != nil:
			return p.RETH.VA, true
		case p.AtomicETH != nil:
			return p.AtomicETH.VA, true
		}
		return "", false
	}},
	{[]string{"infiniband.reth.r_key"}, kindNum, func(p *ndPacket) (string, bool) {
		switch {
		case p.RETH != nil:
			return num(p.RETH.RKey), true
		case p.AtomicETH != nil:
			return num(p.AtomicETH.RKey), true
		}
		return "", false
	}},
	{[]string{"infiniband.reth.dmalen"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.RETH == nil {
			return "", false
		}
		return num(p.RETH.DMALength), true
	}},
	{[]string{"infiniband.atomiceth.swapdt"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.AtomicETH == nil {
			return "", false
		}
		return p.AtomicETH.SwapOrAdd, true
	}},
	{[]string{"infiniband.atomiceth.cmpdt"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.AtomicETH == nil {
			return "", false
		}
		return p.AtomicETH.Compare, true
	}},
	{[]string{"infiniband.aeth.syndrome"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.AETH == nil {
			return "", false
		}
		return num(p.AETH.Syndrome), true
	}},
	{[]string{"infiniband.aeth.msn"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.AETH == nil {
			return "", false
		}
		return num(p.AETH.MSN), true
	}},
	{[]string{"infiniband.deth.q_key"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.DETH == nil {
			return "", false
		}
		return num(p.DETH.QKey), true
	}},
	{[]string{"infiniband.deth.srcqp"}, kindNum, func(p *ndPacket) (string, bool) {
		if p.DETH == nil {
			return "", false
		}
		return num(p.DETH.SrcQP), true
	}},
	// CM REQ. tshark 4.0 misreads the REQ's flow label and packet rate;
	// those are not in the NDJSON anyway.
	{[]string{"infiniband.cm.req.localqpn"}, kindNum, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return optNum(r.LocalQPN)
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.startpsn"}, kindNum, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return optNum(r.StartingPSN)
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.serviceid"}, kindNum, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return r.ServiceID, true
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.pppmtu"}, kindMTU, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return optNum(r.PathMTU)
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.prim_localgid_ipv4", "infiniband.cm.req.prim_localgid"}, kindGID, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return r.PrimaryLocalGID, true
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.prim_remotegid_ipv4", "infiniband.cm.req.prim_remotegid"}, kindGID, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return r.PrimaryRemoteGID, true
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.prim_locallid"}, kindNum, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return optNum(r.PrimaryLocalLID)
		}
		return "", false
	}},
	{[]string{"infiniband.cm.req.prim_remotelid"}, kindNum, func(p *ndPacket) (string, bool) {
		if r := p.req(); r != nil {
			return optNum(r.PrimaryRemoteLID)
		}
		return "", false
	}},
}

// tsharkRows runs tshark on a capture and returns, for every frame, the
// value of each column of tsharkColumns ("" when tshark shows none).
func tsharkRows(t *testing.T, tshark, path string) map[int][]string {
	t.Helper()
	args := []string{"-r", path, "-n", "-T", "fields", "-E", "separator=|", "-E", "occurrence=f", "-e", "frame.number"}
	var index [][]int // column → its fields' positions in the output
	pos := 1
	for _, c := range tsharkColumns {
		var idx []int
		for _, f := range c.fields {
			args = append(args, "-e", f)
			idx = append(idx, pos)
			pos++
		}
		index = append(index, idx)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tshark: %s", stderr.String())

	rows := map[int][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "|")
		require.Len(t, cols, pos, sc.Text())
		n, err := strconv.Atoi(cols[0])
		require.NoError(t, err, sc.Text())
		row := make([]string, len(tsharkColumns))
		for i, idx := range index {
			for _, j := range idx {
				if cols[j] != "" {
					row[i] = cols[j]
					break
				}
			}
		}
		rows[n] = row
	}
	require.NoError(t, sc.Err())
	return rows
}

// sameValue says whether tshark's text ws and our text ours are the same
// value of the given kind.
func sameValue(t *testing.T, kind int, ws, ours string) bool {
	t.Helper()
	switch kind {
	case kindBool:
		b, err := strconv.ParseBool(ws)
		require.NoError(t, err, ws)
		return strconv.FormatBool(b) == ours
	case kindGID:
		a, err := netip.ParseAddr(ws)
		require.NoError(t, err, ws)
		b, err := netip.ParseAddr(ours)
		require.NoError(t, err, ours)
		return a == b
	}
	want, err := strconv.ParseUint(ws, 0, 64)
	require.NoError(t, err, ws)
	got, err := strconv.ParseUint(ours, 0, 64)
	require.NoError(t, err, ours)
	if kind == kindMTU {
		want = 128 << want // IBA MTU code 1 is 256 bytes, 5 is 4096
	}
	return want == got
}

// TestPacketsJSONMatchTshark runs `-P -o json` on each Soft-RoCE capture
// and requires, frame by frame, the header fields tshark shows: every
// frame tshark decodes as InfiniBand is one of our lines with the same
// BTH, RETH, AtomicETH, AETH, DETH and CM REQ values, and no other frame
// is. Only IB fields are compared: tshark 4.0 takes the 4- and 8-byte
// SEND_ONLY payloads of rdma_cm.pcap for malformed RPC-over-RDMA.
func TestPacketsJSONMatchTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	tests := []struct {
		file         string
		frames, rdma int
	}{
		{"pingpong_rc.pcap", 31, 20},
		{"pingpong_uc.pcap", 21, 10},
		{"pingpong_ud.pcap", 21, 10},
		{"rdma_atomic_bw.pcap", 48, 10},
		{"rdma_cm.pcap", 96, 96},
		{"rdma_read_bw.pcap", 60, 20},
		{"rdma_read_lat.pcap", 38, 10},
		{"rdma_send_bw.pcap", 50, 20},
		{"rdma_write_bw.pcap", 60, 20},
		{"rdma_write_lat.pcap", 45, 20},
		{"rping.pcap", 65, 65},
	}
	total, totalFrames := 0, 0
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := needShared(t, filepath.Join(shared, "softroce", tc.file))
			rows := tsharkRows(t, tshark, path)
			require.Len(t, rows, tc.frames, "tshark lists every frame")

			code, out, errs := run(t, nil, "-P", "-o", "json", path)
			require.Equal(t, 0, code, errs)
			ours := map[int]*ndPacket{}
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				p := new(ndPacket)
				require.NoError(t, json.Unmarshal(sc.Bytes(), p), sc.Text())
				require.NotContains(t, ours, p.Frame, "frame %d printed twice", p.Frame)
				ours[p.Frame] = p
			}
			require.NoError(t, sc.Err())
			assert.Len(t, ours, tc.rdma, "RDMA packets printed")

			compared, ibFrames := 0, 0
			for n := 1; n <= tc.frames; n++ {
				row, ok := rows[n]
				require.True(t, ok, "tshark skipped frame %d", n)
				p := ours[n]
				if row[0] == "" { // no BTH for tshark: not an RDMA packet
					assert.Nil(t, p, "frame %d: tshark sees no InfiniBand, we print it", n)
					continue
				}
				ibFrames++
				require.NotNil(t, p, "frame %d: tshark sees InfiniBand, we print nothing", n)
				require.NotNil(t, p.BTH, "frame %d: no BTH in our line", n)
				for i, c := range tsharkColumns {
					got, have := c.get(p)
					ws := row[i]
					if ws == "" {
						assert.False(t, have, "frame %d: %s absent for tshark, ours %q", n, c.fields[0], got)
						continue
					}
					if !assert.True(t, have, "frame %d: %s=%s absent from our line", n, c.fields[0], ws) {
						continue
					}
					assert.True(t, sameValue(t, c.kind, ws, got), "frame %d: %s: tshark %s, ours %s", n, c.fields[0], ws, got)
					compared++
				}
			}
			assert.Equal(t, tc.rdma, ibFrames, "frames tshark decodes as InfiniBand")
			require.Positive(t, compared, "no field compared")
			t.Logf("%d frames, %d InfiniBand, %d field values equal to tshark's", tc.frames, ibFrames, compared)
			total += compared
			totalFrames += ibFrames
		})
	}
	t.Logf("all files: %d InfiniBand frames, %d field values compared", totalFrames, total)
}
