package report

import (
	"fmt"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Fields a header-only capture did not capture are nil in the report and
// "?" in the text: never a zero that was not on the wire.
const uncaptured = "?"

func strOrUnknown(s *string) string {
	if s == nil {
		return uncaptured
	}
	return *s
}

func qpOrUnknown(qp *uint32) string {
	if qp == nil {
		return uncaptured
	}
	return QP(*qp)
}

func numOrUnknown[T uint32 | uint16 | int](v *T) string {
	if v == nil {
		return uncaptured
	}
	return fmt.Sprint(*v)
}

// cutNote says which CM messages of a connection the capture cut.
func cutNote(cn *analyze.Connection) string {
	if !cn.Truncated {
		return ""
	}
	msgs := "REQ/REP"
	if len(cn.CutMessages) > 0 {
		msgs = strings.Join(cn.CutMessages, " and ")
	}
	return fmt.Sprintf("; %s cut by the capture (%s: not captured)", msgs, uncaptured)
}
