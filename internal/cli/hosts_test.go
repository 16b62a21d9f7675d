package cli_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/nccltest"
)

// hostsDoc is the "hosts" object of -o json's output.
type hostsDoc struct {
	Addresses []struct {
		Addr             string `json:"addr"`
		SentMessages     uint64 `json:"sent_messages"`
		SentBytes        uint64 `json:"sent_bytes"`
		ReceivedMessages uint64 `json:"received_messages"`
		ReceivedBytes    uint64 `json:"received_bytes"`
	} `json:"addresses"`
	Files []struct {
		File string   `json:"file"`
		Host *string  `json:"host"`
		Pair []string `json:"pair"`
	} `json:"files"`
}

// hostsJSON runs roce-dissect -o json with args and returns its "hosts".
func hostsJSON(t *testing.T, args ...string) hostsDoc {
	t.Helper()
	code, out, errs := run(t, nil, append([]string{"-o", "json"}, args...)...)
	require.Equal(t, 0, code, errs)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	raw, ok := doc["hosts"]
	require.True(t, ok, `the document has the "hosts" key`)
	var h hostsDoc
	require.NoError(t, json.Unmarshal(raw, &h))
	return h
}

// TestHostsOfNCCLCaptures: each host capture of the real NCCL job was
// taken on the address its NCCL log bootstraps on, read together
// (capture points), alone (streamed, sequential and sharded) and in the
// text report; the addresses are the logs' ranks'.
func TestHostsOfNCCLCaptures(t *testing.T) {
	job := nccltest.Read(t, filepath.Join(shared, "nccl"))
	var addrs []string
	for _, r := range job.Ranks {
		addrs = append(addrs, job.Addr[r])
	}
	whole := hostsJSON(t, job.Pcaps...)
	require.Len(t, whole.Files, len(job.Pcaps))
	var got []string
	for _, a := range whole.Addresses {
		got = append(got, a.Addr)
	}
	assert.ElementsMatch(t, addrs, got)
	for i, f := range whole.Files {
		assert.Equal(t, job.Pcaps[i], f.File)
		require.NotNil(t, f.Host, f.File)
		assert.Equal(t, addrs[i], *f.Host, f.File)
		assert.Nil(t, f.Pair)
	}
	for i, file := range job.Pcaps {
		for _, jobs := range []string{"1", "2"} {
			alone := hostsJSON(t, "-j", jobs, file)
			require.Len(t, alone.Files, 1)
			require.NotNil(t, alone.Files[0].Host, "%s -j %s", file, jobs)
			assert.Equal(t, addrs[i], *alone.Files[0].Host, "%s -j %s", file, jobs)
		}
	}
	code, text, errs := run(t, nil, append([]string{"--color=never"}, job.Pcaps...)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, text, "\nHosts\n")
	for i, file := range job.Pcaps {
		assert.Contains(t, text, "\n  "+file+": taken on "+addrs[i]+"\n")
	}
}

// ctsBytes is a CTS write's payload: one FIFO entry of NCCL 2.20's
// layout, roce-synth nccl's default (../shared/NCCL.md).
const ctsBytes = 64

// TestHostsOfSynthJob: roce-synth nccl's per-host captures, against its
// truth: each file was taken on its rank's address, and each address
// sent the data of the connections it is the sender of and the CTS of
// those it is the receiver of (received: the converse), read together
// and each file alone.
func TestHostsOfSynthJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"3 ranks ring", []string{"--ranks", "3", "--coll", "all_reduce:6K,all_gather:3K"}},
		{"5 ranks, 2 channels, clock offsets", []string{"--ranks", "5", "--channels", "2", "--coll", "all_reduce:64K,reduce_scatter:10K", "--clock-offset", "1=3ms,4=-2ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth, files := synthNCCLJob(t, tc.args...)
			addr := map[int]string{}
			for _, r := range truth.Ranks {
				addr[r.Rank] = r.Addr
			}
			type sums struct{ sentMsgs, sentBytes, recvMsgs, recvBytes uint64 }
			want := map[string]*sums{}
			for _, r := range truth.Ranks {
				want[r.Addr] = &sums{}
			}
			for _, c := range truth.Connections {
				s, r := want[c.Sender], want[c.Receiver]
				require.NotNil(t, s)
				require.NotNil(t, r)
				s.sentMsgs += uint64(c.Messages)
				s.sentBytes += uint64(c.Bytes)
				r.recvMsgs += uint64(c.Messages)
				r.recvBytes += uint64(c.Bytes)
				r.sentMsgs += uint64(c.CTS)
				r.sentBytes += uint64(c.CTS) * ctsBytes
				s.recvMsgs += uint64(c.CTS)
				s.recvBytes += uint64(c.CTS) * ctsBytes
			}
			whole := hostsJSON(t, files...)
			require.Len(t, whole.Addresses, len(want))
			for _, a := range whole.Addresses {
				w := want[a.Addr]
				require.NotNil(t, w, a.Addr)
				assert.Equal(t, *w, sums{a.SentMessages, a.SentBytes, a.ReceivedMessages, a.ReceivedBytes}, a.Addr)
			}
			require.Len(t, whole.Files, len(files))
			for i, f := range truth.Files {
				require.NotNil(t, whole.Files[i].Host, f.File)
				assert.Equal(t, addr[f.Rank], *whole.Files[i].Host, f.File)
				alone := hostsJSON(t, files[i])
				require.NotNil(t, alone.Files[0].Host, f.File)
				assert.Equal(t, addr[f.Rank], *alone.Files[0].Host, f.File)
			}
		})
	}
}
