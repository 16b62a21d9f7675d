package layers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// AETH is the ACK Extended Transport Header, carried by ACKNOWLEDGE,
// ATOMIC ACKNOWLEDGE and the READ responses that carry an ACK.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Syndrome    |                      MSN                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The syndrome: bit 7 reserved; bits 6–5 the kind (00 ACK, 01 RNR NAK,
// 11 NAK); bits 4–0 the credit count, RNR timer code or NAK code.
type AETH struct {
	gplayers.BaseLayer
	extLink
	Syndrome uint8
	MSN      uint32 // 24 bits: message sequence number
}

var (
	_ gopacket.DecodingLayer     = (*AETH)(nil)
	_ gopacket.SerializableLayer = (*AETH)(nil)
)

// AckType is the kind of an AETH syndrome.
type AckType uint8

// AETH syndrome kinds (bits 6–5).
const (
	AckTypeACK      AckType = 0 // positive acknowledgement, with credits
	AckTypeRNRNAK   AckType = 1 // receiver not ready, with a timer
	AckTypeReserved AckType = 2 // reserved encoding
	AckTypeNAK      AckType = 3 // negative acknowledgement, with a code
)

// String returns "ACK", "RNR_NAK", "NAK" or "RESERVED".
func (t AckType) String() string {
	return [...]string{"ACK", "RNR_NAK", "RESERVED", "NAK"}[t&3]
}

// NAKCode is the low five bits of a NAK syndrome.
type NAKCode uint8

// NAK codes.
const (
	NAKPSNSequenceError     NAKCode = 0
	NAKInvalidRequest       NAKCode = 1
	NAKRemoteAccessError    NAKCode = 2
	NAKRemoteOperationalErr NAKCode = 3
	NAKInvalidRDRequest     NAKCode = 4
)

// String names the NAK code ("PSN_SEQUENCE_ERROR", …) or "RESERVED_n".
func (c NAKCode) String() string {
	switch c {
	case NAKPSNSequenceError:
		return "PSN_SEQUENCE_ERROR"
	case NAKInvalidRequest:
		return "INVALID_REQUEST"
	case NAKRemoteAccessError:
		return "REMOTE_ACCESS_ERROR"
	case NAKRemoteOperationalErr:
		return "REMOTE_OPERATIONAL_ERROR"
	case NAKInvalidRDRequest:
		return "INVALID_RD_REQUEST"
	}
	return fmt.Sprintf("RESERVED_%d", uint8(c))
}

// CreditsUnlimited is the ACK credit count meaning "no flow control".
const CreditsUnlimited = 0x1F

// rnrTimer holds the RNR NAK timer values of IBTA table 45, in units of
// 10 µs (0.01 ms).
var rnrTimer = [32]uint32{
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
}

// RNRTimerDuration converts an RNR NAK timer code (0–31) to time: code 0 is
// 655.36 ms, 1 is 0.01 ms, …, 31 is 491.52 ms.
func RNRTimerDuration(code uint8) time.Duration {
	return time.Duration(rnrTimer[code&0x1F]) * 10 * time.Microsecond
}

// Type returns the syndrome's kind (ACK, RNR NAK, NAK).
func (a *AETH) Type() AckType { return AckType(a.Syndrome>>5) & 3 }

// Value returns the low five bits of the syndrome: credits for an ACK,
// the timer code for an RNR NAK, the NAK code for a NAK.
func (a *AETH) Value() uint8 { return a.Syndrome & 0x1F }

// IsACK reports a positive acknowledgement.
func (a *AETH) IsACK() bool { return a.Type() == AckTypeACK }

// IsNAK reports a NAK (not an RNR NAK).
func (a *AETH) IsNAK() bool { return a.Type() == AckTypeNAK }

// IsRNRNAK reports a receiver-not-ready NAK.
func (a *AETH) IsRNRNAK() bool { return a.Type() == AckTypeRNRNAK }

// Credits returns the credit count of an ACK (CreditsUnlimited = 0x1F).
func (a *AETH) Credits() uint8 { return a.Value() }

// NAKCode returns the code of a NAK.
func (a *AETH) NAKCode() NAKCode { return NAKCode(a.Value()) }

// RNRTimer returns the minimum delay an RNR NAK asks for.
func (a *AETH) RNRTimer() time.Duration { return RNRTimerDuration(a.Value()) }

// SyndromeString describes the syndrome: "ACK credits=31",
// "RNR_NAK timer=0.64ms", "NAK PSN_SEQUENCE_ERROR".
func (a *AETH) SyndromeString() string {
	switch a.Type() {
	case AckTypeACK:
		if a.Credits() == CreditsUnlimited {
			return "ACK credits=unlimited"
		}
		return fmt.Sprintf("ACK credits=%d", a.Credits())
	case AckTypeRNRNAK:
		return "RNR_NAK timer=" + strconv.FormatFloat(float64(a.RNRTimer())/float64(time.Millisecond), 'f', -1, 64) + "ms"
	case AckTypeNAK:
		return "NAK " + a.NAKCode().String()
	}
	return fmt.Sprintf("RESERVED syndrome=0x%02x", a.Syndrome)
}

// LayerType returns LayerTypeAETH.
func (a *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (a *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// NextLayerType returns what the BTH's opcode puts after the AETH
// (AtomicAckETH, a READ response's payload, or nothing).
func (a *AETH) NextLayerType() gopacket.LayerType { return a.next(LayerTypeAETH, a.Payload) }

// DecodeFromBytes decodes the AETH; slices alias data.
func (a *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	a.Syndrome, a.MSN = 0, 0
	if err := decodeExt(&a.BaseLayer, "aeth", data, AETHLen, df); err != nil {
		return err
	}
	a.Syndrome = data[0]
	a.MSN = get24(data[1:4])
	return nil
}

// SerializeTo writes the AETH.
func (a *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if a.MSN > 0xFFFFFF {
		return fmt.Errorf("aeth: %w: MSN 0x%x (24 bits)", ErrFieldRange, a.MSN)
	}
	p, err := b.PrependBytes(AETHLen)
	if err != nil {
		return err
	}
	p[0] = a.Syndrome
	put24(p[1:4], a.MSN)
	return nil
}
