package layers

import (
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// extLink is embedded by every extension header: it links the header to
// the BTH it follows, whose opcode decides what comes next. A header
// decoded through gopacket.NewPacket, or taken from TransportLayers, is
// linked; an unlinked header (one you declared yourself and put in a
// DecodingLayerParser) ends the decoding after itself with its payload as
// gopacket.LayerTypePayload.
type extLink struct {
	bth *BTH
}

func (e *extLink) next(self gopacket.LayerType, rest []byte) gopacket.LayerType {
	if e.bth != nil {
		return e.bth.nextAfter(self)
	}
	if len(rest) > 0 {
		return gopacket.LayerTypePayload
	}
	return gopacket.LayerTypeZero
}

// decodeExt checks the length of a fixed-size extension header and sets
// its Contents and Payload.
func decodeExt(base *gplayers.BaseLayer, name string, data []byte, n int, df gopacket.DecodeFeedback) error {
	*base = gplayers.BaseLayer{}
	if len(data) < n {
		df.SetTruncated()
		return fmt.Errorf("%s: %w: %d bytes, need %d", name, ErrTruncated, len(data), n)
	}
	base.Contents = data[:n]
	base.Payload = data[n:]
	return nil
}
