package sqltest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
	"github.com/roce-dissect/roce-dissect/points"
)

// TestPointsLinks: sql/points_links.sql over one export per capture
// point of a roce-synth points run gives, for every link the in-process
// analysis of the same files reports, a row with upstream true and the
// same matched and corrupted counts, lost + not_captured missing
// downstream, and the same smallest and largest one-way delay within the
// two files' stated clock offset errors.
func TestPointsLinks(t *testing.T) {
	psns := func(s string) []synth.PSNRef {
		l, err := synth.ParsePSNList(s)
		require.NoError(t, err)
		return l
	}
	chain := func(s string) wrap.Chain {
		c, err := wrap.Parse(s)
		require.NoError(t, err)
		return c
	}
	hostB := func(drop string) synth.Point {
		p := synth.Point{Name: "hostB", ClockOffset: 1500 * time.Microsecond, Delay: 3 * time.Microsecond, Jitter: 200 * time.Nanosecond, TTLDec: 1}
		if drop != "" {
			p.TapDrop = psns(drop)
		}
		return p
	}
	cases := []struct {
		name    string
		base    synth.Config
		points  []synth.Point
		lossHop int
		corrupt string
	}{
		{"ipv4 resends, tap drop, corruption (ns)", synth.Config{Scenario: "write-bw", Messages: 8, Nanos: true, Impairments: synth.Impairments{NAK: psns("+5,+10")}},
			[]synth.Point{{Name: "hostA"}, hostB("+3")}, 1, "+10"},
		{"ipv4 no resends (µs)", synth.Config{Scenario: "write-bw", Messages: 8}, []synth.Point{{Name: "hostA"}, hostB("")}, 1, ""},
		{"ipv6 resends (ns)", synth.Config{Scenario: "send-bw", Encap: synth.EncapIPv6, Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: psns("+4")}},
			[]synth.Point{{Name: "hostA"}, hostB("+1")}, 1, ""},
		{"rocev1 resends and corruption (ns)", synth.Config{Scenario: "write-bw", Encap: synth.EncapRoCEv1, Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: psns("+2,+9")}},
			[]synth.Point{{Name: "hostA"}, hostB("+6")}, 1, "+9"},
		{"read-bw (ns)", synth.Config{Scenario: "read-bw", Messages: 6, Nanos: true}, []synth.Point{{Name: "hostA"}, hostB("")}, 1, ""},
		{"three points, loss after the mirror (ns)", synth.Config{Scenario: "write-bw", Messages: 10, Nanos: true, Impairments: synth.Impairments{NAK: psns("+7")}},
			[]synth.Point{
				{Name: "hostA", ClockOffset: -2 * time.Millisecond},
				{Name: "mirror", ClockOffset: 40 * time.Microsecond, Delay: 1 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1, TapDrop: psns("+12")},
				{Name: "hostB", ClockOffset: 7 * time.Millisecond, Delay: 2 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1},
			}, 2, ""},
		{"a switch's ERSPAN mirror between two hosts, one behind VXLAN (ns)", synth.Config{Scenario: "write-bw", Messages: 10, Nanos: true, Impairments: synth.Impairments{NAK: psns("+4")}},
			[]synth.Point{
				{Name: "hostA"},
				{Name: "mirror", ClockOffset: 30 * time.Microsecond, Delay: 1 * time.Microsecond, TTLDec: 1, Wrap: chain("erspan2")},
				{Name: "hostB", ClockOffset: -3 * time.Millisecond, Delay: 2 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1, Wrap: chain("vxlan")},
			}, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pc := synth.PointsConfig{Base: tc.base, Points: tc.points, LossHop: tc.lossHop}
			if tc.corrupt != "" {
				pc.Corrupt = psns(tc.corrupt)
			}
			dir := t.TempDir()
			files, caps := writePoints(t, dir, pc)
			root := filepath.Join(dir, "exports")
			exportCaptures(t, root, caps)

			// The oracle: the in-process analysis of all the files.
			var out, errb bytes.Buffer
			require.Equal(t, cli.ExitOK, cli.Run(context.Background(), append([]string{"-o", "json"}, files...), &out, &errb), errb.String())
			var rep struct {
				Points struct {
					Files []struct {
						File          string `json:"file"`
						OffsetErrorNs int64  `json:"offset_error_ns"`
					} `json:"files"`
					Links []points.Link `json:"links"`
				} `json:"points"`
			}
			require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
			require.NotEmpty(t, rep.Points.Links)
			offsetErr := map[string]int64{}
			for _, f := range rep.Points.Files {
				offsetErr[pointName(f.File)] = max(f.OffsetErrorNs, 0)
			}

			conn := openFleet(t, root)
			res, err := query(t, conn, readSQL(t, "sql/points_links.sql"))
			require.NoError(t, err)
			rows := map[string]map[string]string{}
			for i := range res.rows {
				r := res.row(i)
				k := strings.Join([]string{r["src"], r["dst"], r["dest_qp"], r["from_capture"], r["to_capture"]}, " ")
				back := strings.Join([]string{r["src"], r["dst"], r["dest_qp"], r["to_capture"], r["from_capture"]}, " ")
				require.NotContains(t, rows, k, "one row per flow and pair")
				require.NotContains(t, rows, back, "one row per flow and pair: not also the other way")
				rows[k] = r
				if r["upstream"] != "NULL" {
					assert.Equal(t, "true", r["upstream"], "%s: from the upstream capture", k)
				}
			}
			// Each flow's row for each pair of the points that saw it.
			perFlow := map[string]int{}
			for _, r := range rows {
				perFlow[r["src"]+" "+r["dst"]+" "+r["dest_qp"]]++
			}
			n := len(tc.points)
			for f, got := range perFlow {
				assert.Equal(t, n*(n-1)/2, got, "%s: a row per pair of points", f)
			}
			for _, l := range rep.Points.Links {
				from, to := pointName(l.From), pointName(l.To)
				k := strings.Join([]string{l.Src, l.Dst, strconv.FormatUint(uint64(l.DestQP), 10), from, to}, " ")
				r, ok := rows[k]
				if !assert.True(t, ok, "link %s", k) {
					continue
				}
				assert.Equal(t, "true", r["upstream"], "%s: upstream", k)
				assert.Equal(t, strconv.FormatUint(l.Matched, 10), r["matched"], "%s: matched", k)
				assert.Equal(t, strconv.FormatUint(l.Corrupted, 10), r["corrupted"], "%s: corrupted", k)
				assert.Equal(t, strconv.FormatUint(l.Lost+l.NotCaptured, 10), r["missing_downstream"], "%s: lost + not captured", k)
				tol := float64(offsetErr[from] + offsetErr[to] + 2000)
				for col, want := range map[string]int64{"delay_min_ns": l.OneWayDelayNs.Min, "delay_max_ns": l.OneWayDelayNs.Max} {
					got, err := strconv.ParseFloat(r[col], 64)
					if assert.NoError(t, err, "%s: %s", k, col) {
						assert.InDelta(t, want, got, tol, "%s: %s", k, col)
					}
				}
			}
		})
	}
}

// writePoints generates pc's captures into dir, one file per point
// (NAME.pcap), and returns the files in point order and the export
// folders to make (the point's name → its file).
func writePoints(t *testing.T, dir string, pc synth.PointsConfig) ([]string, map[string][]string) {
	t.Helper()
	bufs := make([]bytes.Buffer, len(pc.Points))
	ws := make([]io.Writer, len(pc.Points))
	for i := range bufs {
		ws[i] = &bufs[i]
	}
	_, err := synth.WritePoints(pc, ws)
	require.NoError(t, err)
	var files []string
	caps := map[string][]string{}
	for i, p := range pc.Points {
		f := filepath.Join(dir, p.Name+".pcap")
		require.NoError(t, os.WriteFile(f, bufs[i].Bytes(), 0o644))
		files = append(files, f)
		caps[p.Name] = []string{f}
	}
	return files, caps
}

// pointName is the export folder of a capture point's file.
func pointName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
}
