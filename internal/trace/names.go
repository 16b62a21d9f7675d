package trace

import "github.com/roce-dissect/roce-dissect/layers"

// messageName names a message's slice by its operation, from the opcode
// of the packet that completed it: SEND, WRITE, READ response, atomic
// or, for another, "message".
func messageName(op layers.Opcode) string {
	switch o := op.Operation(); {
	case o <= layers.OperationSendOnlyWithImmediate,
		o == layers.OperationSendLastWithInvalidate, o == layers.OperationSendOnlyWithInvalidate:
		return "SEND"
	case o >= layers.OperationRDMAWriteFirst && o <= layers.OperationRDMAWriteOnlyWithImmediate:
		return "WRITE"
	case o >= layers.OperationRDMAReadResponseFirst && o <= layers.OperationRDMAReadResponseOnly:
		return "READ response"
	case o == layers.OperationCompareSwap, o == layers.OperationFetchAdd, o == layers.OperationAtomicWrite:
		return "atomic"
	}
	return "message"
}
