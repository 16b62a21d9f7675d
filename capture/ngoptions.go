package capture

// maxKeptOption bounds the value of each option of a section header,
// interface description or interface statistics block as pcapgo sees it.
// pcapgo keeps such options (names, descriptions, filters, comments) as
// strings for as long as the section lasts, for each of up to
// maxInterfaces interfaces: unbounded, 4,096 interfaces with five 64 KiB
// options each held 1.98 GiB. Cut to 256 bytes, an interface costs at
// most about 1.5 KiB (five strings, a statistics comment and pcapgo's
// NgInterface), a section at most about 100 MiB.
const maxKeptOption = 256

// trimOptions cuts every option of block b, from byte off to the trailer,
// whose value is longer than maxKeptOption bytes to its first
// maxKeptOption bytes: the options are moved up over what was cut, and an
// end-of-options follows them (pcapgo skips the rest of the block, as it
// skips whatever follows an end-of-options). The interface names, filters
// and comments the analyzer never reads keep their first 256 bytes;
// numeric options are 8 bytes or less and never cut. checkOptions has
// checked that every option fits in the block.
func (f *ngFramer) trimOptions(b []byte, off int) {
	end := len(b) - 4
	w, cut := off, false
	for p := off; p+4 <= end; {
		n := int(f.u16(b[p+2 : p+4]))
		if f.u16(b[p:p+2]) == 0 {
			break
		}
		next := p + 4 + pad4(n)
		if n > maxKeptOption {
			n, cut = maxKeptOption, true
		}
		if w != p || cut {
			copy(b[w:], b[p:p+4+pad4(n)])
			f.put16(b[w+2:w+4], uint16(n))
		}
		w += 4 + pad4(n)
		p = next
	}
	if cut {
		// A cut saved at least 4 bytes: the end-of-options fits.
		copy(b[w:w+4], []byte{0, 0, 0, 0})
	}
}

func (f *ngFramer) put16(b []byte, v uint16) { f.bigEndian.put16(b, v) }

// checkKeptOptions checks the options of a block whose options pcapgo
// keeps, and cuts the long ones (trimOptions).
func (f *ngFramer) checkKeptOptions(b []byte, off int) error {
	if err := f.checkOptions(b, off); err != nil {
		return err
	}
	f.trimOptions(b, off)
	if f.typ == ngIDB {
		f.secondsResolution(b, off)
	}
	return nil
}

// ifTSResol is the code of an interface description's if_tsresol option.
const ifTSResol = 9

// secondsResolution rewrites an if_tsresol of 0 (10^0: timestamps count
// seconds) as 0x80 (2^-0, the same unit), since pcapgo takes 0 for the
// option's absence and reads the timestamps as microseconds. The options
// from off on are checked already.
func (f *ngFramer) secondsResolution(b []byte, off int) {
	end := len(b) - 4
	for p := off; p+4 <= end; {
		code, n := f.u16(b[p:p+2]), int(f.u16(b[p+2:p+4]))
		if code == 0 {
			return
		}
		if code == ifTSResol && n == 1 && b[p+4] == 0 {
			b[p+4] = 0x80
		}
		p += 4 + pad4(n)
	}
}
