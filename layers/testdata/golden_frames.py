# Writes golden_frames_test.go (run from layers/: python3 testdata/golden_frames.py > golden_frames_test.go; gofmt -w golden_frames_test.go).
# Golden frames written header by header, with the IPv4/UDP checksums, ICRC and
# VCRC computed here, independently of the Go code, from the rules in PROTOCOL.md.
import zlib, struct, json

def crc16_vcrc(data):
    crc = 0xFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xD008 if crc & 1 else crc >> 1
    return (~crc) & 0xFFFF

def csum16(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('>%dH' % (len(b)//2), b))
    while s >> 16: s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF

def h(b, groups):
    # groups: list of field widths in bytes
    out, i = [], 0
    for g in groups:
        out.append(b[i:i+g].hex()); i += g
    assert i == len(b), (i, len(b))
    return ' '.join(out)

class Seg:
    def __init__(s, name, data, groups, comment):
        s.name, s.data, s.groups, s.comment = name, bytearray(data), groups, comment

# ---- IB headers ----
def bth(op, destqp, psn, se=0, m=0, pad=0, tver=0, pkey=0xFFFF, fecn=0, becn=0, ackreq=0, dc=0):
    d = bytes([op, se<<7 | m<<6 | pad<<4 | tver]) + struct.pack('>H', pkey) + bytes([fecn<<7 | becn<<6]) + destqp.to_bytes(3,'big') + bytes([ackreq<<7]) + psn.to_bytes(3,'big')
    go = 'Opcode: 0x%02X' % op
    if se: go += ', SolicitedEvent: true'
    if m: go += ', MigReq: true'
    if pad: go += ', PadCnt: %d' % pad
    if tver: go += ', TVer: %d' % tver
    go += ', PKey: 0x%04X' % pkey
    if fecn: go += ', FECN: true'
    if becn: go += ', BECN: true'
    go += ', DestQP: 0x%X' % destqp
    if ackreq: go += ', AckReq: true'
    go += ', PSN: %d' % psn
    if dc: go += ', DC: true'  # decoded as DC: not a wire bit, the decoder's verdict
    return Seg('BTH', d, [1,1,2,1,3,1,3], 'BTH: opcode 0x%02X, SE %d M %d PadCnt %d TVer %d, P_Key 0x%04X, FECN %d BECN %d, DestQP 0x%X, AckReq %d, PSN %d' % (op,se,m,pad,tver,pkey,fecn,becn,destqp,ackreq,psn)), '&BTH{%s}' % go

def rdeth(ee): return Seg('RDETH', b'\0'+ee.to_bytes(3,'big'), [1,3], 'RDETH: reserved, EE context 0x%X' % ee), '&RDETH{EECnxt: 0x%X}' % ee
# The RDETH place of a DC packet: 4 bytes in the RDETH layout, first byte not zero.
def rdeth_place(b): return Seg('RDETH', b, [1,3], 'DC RDETH place: %02x, 0x%X' % (b[0], int.from_bytes(b[1:],'big'))), '&RDETH{Reserved: 0x%02X, EECnxt: 0x%X}' % (b[0], int.from_bytes(b[1:],'big'))
def deth_place(b): return Seg('DETH', b, [4,1,3], 'DC DETH place: 0x%08X, %02x, 0x%X' % (int.from_bytes(b[:4],'big'), b[4], int.from_bytes(b[5:],'big'))), '&DETH{QKey: 0x%08X, Reserved: 0x%02X, SrcQP: 0x%X}' % (int.from_bytes(b[:4],'big'), b[4], int.from_bytes(b[5:],'big'))
def dceth(b): return Seg('DCETH', b, [4,4], 'DCETH: two words of unknown meaning'), '&DCETH{Word0: 0x%X, Word1: 0x%X}' % (int.from_bytes(b[:4],'big'), int.from_bytes(b[4:],'big'))
def deth(qkey, src): return Seg('DETH', struct.pack('>I', qkey)+b'\0'+src.to_bytes(3,'big'), [4,1,3], 'DETH: Q_Key 0x%08X, reserved, SrcQP 0x%X' % (qkey, src)), '&DETH{QKey: 0x%08X, SrcQP: 0x%X}' % (qkey, src)
def xrceth(srq): return Seg('XRCETH', b'\0'+srq.to_bytes(3,'big'), [1,3], 'XRCETH: reserved, XRC SRQ 0x%X' % srq), '&XRCETH{XRCSRQ: 0x%X}' % srq
def reth(va, rkey, ln): return Seg('RETH', struct.pack('>QII', va, rkey, ln), [8,4,4], 'RETH: VA 0x%X, R_Key 0x%08X, DMA length %d' % (va, rkey, ln)), '&RETH{VA: 0x%X, RKey: 0x%08X, DMALength: %d}' % (va, rkey, ln)
def atomiceth(va, rkey, swap, cmp): return Seg('AtomicETH', struct.pack('>QIQQ', va, rkey, swap, cmp), [8,4,8,8], 'AtomicETH: VA 0x%X, R_Key 0x%08X, swap/add 0x%X, compare 0x%X' % (va,rkey,swap,cmp)), '&AtomicETH{VA: 0x%X, RKey: 0x%08X, SwapOrAdd: 0x%X, Compare: 0x%X}' % (va,rkey,swap,cmp)
def aeth(syn, msn): return Seg('AETH', bytes([syn])+msn.to_bytes(3,'big'), [1,3], 'AETH: syndrome 0x%02X, MSN %d' % (syn, msn)), '&AETH{Syndrome: 0x%02X, MSN: %d}' % (syn, msn)
def atomicacketh(v): return Seg('AtomicAckETH', struct.pack('>Q', v), [8], 'AtomicAckETH: original remote data 0x%X' % v), '&AtomicAckETH{OrigRemoteData: 0x%X}' % v
def immdt(v): return Seg('ImmDt', struct.pack('>I', v), [4], 'ImmDt: 0x%08X' % v), '&ImmDt{Immediate: 0x%08X}' % v
def ieth(v): return Seg('IETH', struct.pack('>I', v), [4], 'IETH: R_Key 0x%08X' % v), '&IETH{RKey: 0x%08X}' % v
def feth(sel, plt): return Seg('FETH', struct.pack('>I', sel<<4 | plt), [4], 'FETH: reserved, selectivity %d, placement type %d' % (sel, plt)), '&FETH{SelectivityLevel: %d, PlacementType: %d}' % (sel, plt)
def cnp(): return Seg('CNP', bytes(16), [16], 'CNP: 16 reserved bytes'), '&CNP{}'
def payload(b): return Seg('payload', b, [len(b)], 'payload, %d bytes' % len(b)), 'payloadOf("%s")' % b.hex()

def ib_packet(bth_op, fields, exts, pl):
    """returns list of (seg, go) for BTH..payload+pad, with PadCnt computed"""
    hl = sum(len(s.data) for s, _ in exts)
    pad = (4 - len(pl) % 4) % 4
    b = bth(bth_op, pad=pad, **fields)
    segs = [b] + exts
    if pl: segs.append(payload(pl))
    if pad: segs.append((Seg('pad', bytes(pad), [1]*pad, 'pad, %d bytes' % pad), None))
    return segs

MAC_DST, MAC_SRC = bytes.fromhex('020000000002'), bytes.fromhex('020000000001')
def eth(etype): return Seg('Ethernet', MAC_DST+MAC_SRC+struct.pack('>H', etype), [6,6,2], 'Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x%04X' % etype), None

def finish_v2(ib, ipver=4, sport=49152, tos=0x02, ttl=64):
    ibb = b''.join(s.data for s, _ in ib)
    udplen = 8 + len(ibb) + 4
    segs = []
    if ipver == 4:
        segs.append(eth(0x0800))
        ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, tos, 20+udplen, 0x1234, 0x4000, ttl, 17, 0, bytes([10,0,0,1]), bytes([10,0,0,2])))
        ip[10:12] = struct.pack('>H', csum16(bytes(ip)))
        segs.append((Seg('IPv4', ip, [1,1,2,2,2,1,1,2,4,4], 'IPv4: IHL 5, TOS 0x%02X, total length %d, ID 0x1234, DF, TTL %d, UDP, checksum, 10.0.0.1 -> 10.0.0.2' % (tos, 20+udplen, ttl)), None))
        pseudo = bytes(ip[12:20]) + struct.pack('>BBH', 0, 17, udplen)
    else:
        segs.append(eth(0x86DD))
        src = bytes.fromhex('fd000000000000000000000000000001'); dst = bytes.fromhex('fd000000000000000000000000000002')
        ip = bytearray(struct.pack('>IHBB', 6<<28 | tos<<20 | 0x12345, udplen, 17, ttl) + src + dst)
        segs.append((Seg('IPv6', ip, [4,2,1,1,16,16], 'IPv6: traffic class 0x%02X, flow label 0x12345, payload length %d, UDP, hop limit %d, fd00::1 -> fd00::2' % (tos, udplen, ttl)), None))
        pseudo = src + dst + struct.pack('>IxxxB', udplen, 17)
    udp = bytearray(struct.pack('>HHHH', sport, 4791, udplen, 0))
    # ICRC: 8 x 0xFF, masked IP, UDP with checksum 0xFFFF, BTH byte 4 = 0xFF, rest
    mip = bytearray(ip)
    if ipver == 4:
        mip[1] = 0xFF; mip[8] = 0xFF; mip[10:12] = b'\xff\xff'
    else:
        mip[0] |= 0x0F; mip[1:4] = b'\xff\xff\xff'; mip[7] = 0xFF
    mudp = bytearray(udp); mudp[6:8] = b'\xff\xff'
    mib = bytearray(ibb); mib[4] = 0xFF
    icrc = zlib.crc32(b'\xff'*8 + bytes(mip) + bytes(mudp) + bytes(mib))
    icrcb = icrc.to_bytes(4, 'little')
    c = csum16(pseudo + bytes(udp) + ibb + icrcb)
    if c == 0: c = 0xFFFF
    udp[6:8] = struct.pack('>H', c)
    segs.append((Seg('UDP', udp, [2,2,2,2], 'UDP: %d -> 4791, length %d, checksum' % (sport, udplen)), None))
    segs += ib
    segs.append((Seg('ICRC', icrcb, [4], 'ICRC (CRC-32 0x%08X, least-significant byte first)' % icrc), '&ICRC{Value: 0x%08X}' % icrc))
    return segs

def grh_seg(paylen, sgid, dgid, tclass=0, flow=0, hop=64, nxt=0x1B):
    d = struct.pack('>IHBB', 6<<28 | tclass<<20 | flow, paylen, nxt, hop) + sgid + dgid
    return Seg('GRH', d, [4,2,1,1,16,16], 'GRH: IPVer 6, TClass 0x%02X, flow label 0x%X, PayLen %d, NxtHdr 0x%02X, HopLmt %d, SGID, DGID' % (tclass, flow, paylen, nxt, hop))

def grh_go(paylen, sgid, dgid, tclass=0, flow=0, hop=64, nxt=0x1B):
    return '&GRH{IPVer: 6, TClass: 0x%02X, FlowLabel: 0x%X, PayLen: %d, NxtHdr: 0x%02X, HopLmt: %d, SGID: gid("%s"), DGID: gid("%s")}' % (tclass, flow, paylen, nxt, hop, sgid.hex(), dgid.hex())

def mask_grh(g):
    g = bytearray(g); g[0] |= 0x0F; g[1:4] = b'\xff\xff\xff'; g[7] = 0xFF; return bytes(g)

SG1 = bytes.fromhex('fe800000000000000002c90300000001'); SG2 = bytes.fromhex('fe800000000000000002c90300000002')

def finish_v1(ib, tclass=0x02, flow=0x12345, hop=64):
    ibb = b''.join(s.data for s, _ in ib)
    paylen = len(ibb) + 4
    g = grh_seg(paylen, SG1, SG2, tclass, flow, hop)
    mib = bytearray(ibb); mib[4] = 0xFF
    icrc = zlib.crc32(b'\xff'*8 + mask_grh(g.data) + bytes(mib))
    return [eth(0x8915), (g, grh_go(paylen, SG1, SG2, tclass, flow, hop))] + ib + [(Seg('ICRC', icrc.to_bytes(4,'little'), [4], 'ICRC (CRC-32 0x%08X)' % icrc), '&ICRC{Value: 0x%08X}' % icrc)]

def lrh(vl, sl, lnh, dlid, pktlen, slid, lver=0):
    d = bytes([vl<<4 | lver, sl<<4 | lnh]) + struct.pack('>HHH', dlid, pktlen, slid)
    return Seg('LRH', d, [1,1,2,2,2], 'LRH: VL %d LVer %d, SL %d LNH %d, DLID 0x%04X, PktLen %d words, SLID 0x%04X' % (vl, lver, sl, lnh, dlid, pktlen, slid)), '&LRH{VL: %d, LVer: %d, SL: %d, LNH: %d, DLID: 0x%04X, PktLen: %d, SLID: 0x%04X}' % (vl, lver, sl, lnh, dlid, pktlen, slid)

def finish_ib(ib, global_=False, vl=0, sl=0, erf=False):
    ibb = b''.join(s.data for s, _ in ib)
    mib = bytearray(ibb); mib[4] = 0xFF
    segs = []
    if global_:
        paylen = len(ibb) + 4
        g = grh_seg(paylen, SG1, SG2, 0, 0, 1)
        total = 8 + 40 + paylen
        l = lrh(vl, sl, 3, 0x0002, total//4, 0x0001)
        icrc = zlib.crc32(b'\xff'*8 + mask_grh(g.data) + bytes(mib))
        segs = [l, (g, grh_go(paylen, SG1, SG2, 0, 0, 1))]
    else:
        total = 8 + len(ibb) + 4
        l = lrh(vl, sl, 2, 0x0002, total//4, 0x0001)
        ml = bytearray(l[0].data); ml[0] |= 0xF0
        icrc = zlib.crc32(bytes(ml) + bytes(mib))
        segs = [l]
    segs += ib
    icrcb = icrc.to_bytes(4, 'little')
    segs.append((Seg('ICRC', icrcb, [4], 'ICRC (CRC-32 0x%08X)' % icrc), '&ICRC{Value: 0x%08X}' % icrc))
    pkt = b''.join(s.data for s, _ in segs)
    v = crc16_vcrc(pkt)
    segs.append((Seg('VCRC', v.to_bytes(2,'little'), [2], 'VCRC (CRC-16 0x%04X, least-significant byte first)' % v), '&VCRC{Value: 0x%04X}' % v))
    if erf:
        wlen = len(pkt) + 2
        ts = 0x5F5E100000000000
        d = struct.pack('<Q', ts) + bytes([21, 0x04]) + struct.pack('>HHH', 16+wlen, 0, wlen)
        segs.insert(0, (Seg('ERF', d, [8,1,1,2,2,2], 'ERF: timestamp (little-endian), type 21 (InfiniBand), flags 0x04, rlen %d, loss 0, wlen %d' % (16+wlen, wlen)),
                        '&ERF{Timestamp: 0x%X, Type: 21, Flags: 0x04, RLen: %d, WLen: %d}' % (ts, 16+wlen, wlen)))
    return segs

P16 = bytes(range(0x10, 0x20))
frames = []
def add(name, first, segs): frames.append((name, first, segs))

V2 = 'gplayers.LayerTypeEthernet'
add('RC SEND_ONLY, 7-byte payload (PadCnt 1)', V2, finish_v2(ib_packet(0x04, dict(destqp=0x11, psn=100, ackreq=1, se=1), [], b'hello!!')))
add('RC SEND_FIRST', V2, finish_v2(ib_packet(0x00, dict(destqp=0x11, psn=101), [], P16)))
add('RC SEND_LAST_WITH_IMMEDIATE', V2, finish_v2(ib_packet(0x03, dict(destqp=0x11, psn=102, ackreq=1), [immdt(0xDEADBEEF)], P16[:6])))
add('RC RDMA_WRITE_FIRST', V2, finish_v2(ib_packet(0x06, dict(destqp=0x12, psn=0xFFFFFE, m=1), [reth(0x00007F0000001000, 0x00001234, 3000)], P16)))
add('RC RDMA_WRITE_MIDDLE', V2, finish_v2(ib_packet(0x07, dict(destqp=0x12, psn=0xFFFFFF, m=1), [], P16)))
add('RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5-byte payload (PadCnt 3)', V2, finish_v2(ib_packet(0x0B, dict(destqp=0x12, psn=0, ackreq=1), [reth(0x1000, 0xABCD, 5), immdt(0x01020304)], b'\x01\x02\x03\x04\x05')))
add('RC RDMA_READ_REQUEST', V2, finish_v2(ib_packet(0x0C, dict(destqp=0x13, psn=500, ackreq=1), [reth(0x00007F0000002000, 0x00000D48, 3000)], b'')))
add('RC RDMA_READ_RESPONSE_FIRST', V2, finish_v2(ib_packet(0x0D, dict(destqp=0x14, psn=500), [aeth(0x1F, 3)], P16)))
add('RC RDMA_READ_RESPONSE_MIDDLE', V2, finish_v2(ib_packet(0x0E, dict(destqp=0x14, psn=501), [], P16)))
add('RC RDMA_READ_RESPONSE_LAST, 6-byte payload (PadCnt 2)', V2, finish_v2(ib_packet(0x0F, dict(destqp=0x14, psn=502), [aeth(0x1F, 3)], P16[:6])))
add('RC RDMA_READ_RESPONSE_ONLY', V2, finish_v2(ib_packet(0x10, dict(destqp=0x14, psn=503), [aeth(0x0A, 4)], P16[:8])))
add('RC ACKNOWLEDGE, unlimited credits', V2, finish_v2(ib_packet(0x11, dict(destqp=0x15, psn=102), [aeth(0x1F, 7)], b'')))
add('RC ACKNOWLEDGE, NAK PSN sequence error', V2, finish_v2(ib_packet(0x11, dict(destqp=0x15, psn=103), [aeth(0x60, 7)], b'')))
add('RC ACKNOWLEDGE, RNR NAK timer 14 (1.28 ms)', V2, finish_v2(ib_packet(0x11, dict(destqp=0x15, psn=103), [aeth(0x2E, 7)], b'')))
add('RC COMPARE_SWAP', V2, finish_v2(ib_packet(0x13, dict(destqp=0x16, psn=7, ackreq=1), [atomiceth(0x00007F0000003000, 0x00001986, 0x1111111111111111, 0x2222222222222222)], b'')))
add('RC FETCH_ADD', V2, finish_v2(ib_packet(0x14, dict(destqp=0x16, psn=8, ackreq=1), [atomiceth(0x00007F0000003008, 0x00001986, 1, 0)], b'')))
add('RC ATOMIC_ACKNOWLEDGE', V2, finish_v2(ib_packet(0x12, dict(destqp=0x17, psn=8), [aeth(0x1F, 9), atomicacketh(0x3A00B0A0C0D0E0F1)], b'')))
add('RC SEND_ONLY_WITH_INVALIDATE', V2, finish_v2(ib_packet(0x17, dict(destqp=0x11, psn=103, ackreq=1), [ieth(0x00004321)], P16[:4])))
add('RC SEND_LAST_WITH_INVALIDATE', V2, finish_v2(ib_packet(0x16, dict(destqp=0x11, psn=104, ackreq=1), [ieth(0x00004322)], P16[:9])))
add('RC FLUSH', V2, finish_v2(ib_packet(0x1C, dict(destqp=0x12, psn=9, ackreq=1), [feth(1, 2), reth(0x00007F0000004000, 0x00000777, 4096)], b'')))
add('RC ATOMIC_WRITE', V2, finish_v2(ib_packet(0x1D, dict(destqp=0x12, psn=10, ackreq=1), [reth(0x00007F0000004008, 0x00000777, 8)], bytes.fromhex('0102030405060708'))))
add('UC SEND_ONLY over IPv6', V2, finish_v2(ib_packet(0x24, dict(destqp=0xD3, psn=0xCF1710), [], P16[:5]), ipver=6))
add('UC RDMA_WRITE_ONLY', V2, finish_v2(ib_packet(0x2A, dict(destqp=0xD4, psn=1), [reth(0x5000, 0x99, 16)], P16)))
# RD frames decode as RD only when too short for the DC headers (layers.RDDecoding):
# a 4-byte RD SEND_ONLY has 16 bytes after the BTH, DC needs 20.
add('RD SEND_ONLY, 4-byte payload (too short for DC)', V2, finish_v2(ib_packet(0x44, dict(destqp=0x20, psn=1, ackreq=1), [rdeth(0xABCDE), deth(0x11111111, 0x21)], P16[:4])))
add('RD RDMA_WRITE_ONLY_WITH_IMMEDIATE (four extension headers)', V2, finish_v2(ib_packet(0x4B, dict(destqp=0x20, psn=2, ackreq=1), [rdeth(0xABCDE), deth(0x11111111, 0x21), reth(0x6000, 0x55, 3), immdt(7)], b'\xaa\xbb\xcc')))
add('RD ACKNOWLEDGE', V2, finish_v2(ib_packet(0x51, dict(destqp=0x21, psn=2), [rdeth(0xABCDE), aeth(0x1F, 2)], b'')))
# DC (NVIDIA Dynamically Connected) on the RD opcodes. The bytes after the BTH of the
# first two are those of a real ConnectX capture (PROTOCOL.md); their BTH fields and the
# 8 payload bytes are made up (the capture's are not given).
DCW = [rdeth_place(bytes.fromhex('11009036')), deth_place(bytes.fromhex('007150010061e24e')), dceth(bytes.fromhex('0000c0dc00000000'))]
DCA = [rdeth_place(bytes.fromhex('10807ff4')), deth_place(bytes.fromhex('007150010061e24f')), dceth(bytes.fromhex('0000c0db00000000'))]
add('DC RDMA_WRITE_ONLY, 8 bytes (real DC header bytes)', V2, finish_v2(ib_packet(0x4A, dict(destqp=0x61E24F, psn=0x3A5, ackreq=1, dc=1), DCW + [reth(0x7FB235D09A00, 0x00053829, 8)], bytes.fromhex('0102030405060708'))))
add('DC ACKNOWLEDGE (real DC header bytes)', V2, finish_v2(ib_packet(0x51, dict(destqp=0x61E24E, psn=0x3A5, dc=1), DCA + [aeth(0x1F, 0)], b'')))
add('DC RDMA_READ_REQUEST', V2, finish_v2(ib_packet(0x4C, dict(destqp=0x61E24F, psn=0x3A6, ackreq=1, dc=1), DCW + [reth(0x7FB235D09A00, 0x00053829, 4096)], b'')))
add('DC RDMA_READ_RESPONSE_ONLY over RoCE v1', V2, finish_v1(ib_packet(0x50, dict(destqp=0x61E24E, psn=0x3A6, dc=1), DCA + [aeth(0x1F, 1)], P16[:6])))
add('UD SEND_ONLY', V2, finish_v2(ib_packet(0x64, dict(destqp=0x22, psn=0x123456), [deth(0x11111111, 0x23)], P16)))
add('UD SEND_ONLY_WITH_IMMEDIATE', V2, finish_v2(ib_packet(0x65, dict(destqp=0x22, psn=0x123457), [deth(0x11111111, 0x23), immdt(0xCAFEF00D)], P16[:10])))
add('XRC SEND_ONLY', V2, finish_v2(ib_packet(0xA4, dict(destqp=0x30, psn=11, ackreq=1), [xrceth(0x31)], P16[:12])))
add('XRC RDMA_READ_REQUEST', V2, finish_v2(ib_packet(0xAC, dict(destqp=0x30, psn=12, ackreq=1), [xrceth(0x31), reth(0x7000, 0x66, 64)], b'')))
add('XRC ACKNOWLEDGE (no XRCETH)', V2, finish_v2(ib_packet(0xB1, dict(destqp=0x32, psn=12), [aeth(0x1F, 1)], b'')))
add('RoCE v2 CNP 0x81, ECN CE, UDP source port 0', V2, finish_v2(ib_packet(0x81, dict(destqp=0x118, psn=0, becn=1), [cnp()], b''), sport=0, tos=0xC3))
add('CNP 0x80 over RoCE v2', V2, finish_v2(ib_packet(0x80, dict(destqp=0x118, psn=0, becn=1), [cnp()], b''), sport=0xC001, tos=0x02))
add('RoCE v1 (GRH) RC SEND_ONLY', V2, finish_v1(ib_packet(0x04, dict(destqp=0x40, psn=77, ackreq=1), [], P16[:11])))
add('RoCE v1 (GRH) RC ACKNOWLEDGE', V2, finish_v1(ib_packet(0x11, dict(destqp=0x41, psn=77), [aeth(0x1F, 1)], b'')))
NIB = 'LayerTypeLRH'
add('native IB, LRH without GRH, RC SEND_ONLY', NIB, finish_ib(ib_packet(0x04, dict(destqp=0x50, psn=5, ackreq=1), [], P16[:7]), vl=2, sl=3))
add('native IB, LRH without GRH, CNP 0x80', NIB, finish_ib(ib_packet(0x80, dict(destqp=0x50, psn=0, becn=1), [cnp()], b'')))
add('native IB, LRH + GRH, UD SEND_ONLY', NIB, finish_ib(ib_packet(0x64, dict(destqp=0x51, psn=6), [deth(0x22222222, 0x52)], P16[:13]), global_=True))
add('native IB, LRH without GRH, DC SEND_ONLY', NIB, finish_ib(ib_packet(0x44, dict(destqp=0x54, psn=7, ackreq=1, dc=1), DCW + [], P16[:9])))
add('ERF record (type 21), LRH, RC ACKNOWLEDGE', 'LayerTypeERF', finish_ib(ib_packet(0x11, dict(destqp=0x53, psn=6), [aeth(0x1F, 6)], b''), erf=True))

print('''// Golden frames, written by testdata/golden_frames.py from the field
// values in the comments. The IPv4/UDP checksums, ICRCs and VCRCs were
// computed there, independently of this package (zlib CRC-32 over the
// headers masked as PROTOCOL.md says, a bitwise CRC-16/0x100B); edit the
// script, not this file, so that they stay right.

package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// goldenFrames holds one frame per opcode family and encapsulation, written
// header by header (each string is one header, its bytes grouped by field).
var goldenFrames = []goldenFrame{''')
for name, first, segs in frames:
    print('\t{')
    import json
    print('\t\tname:  %s,' % json.dumps(name))
    print('\t\tfirst: %s,' % first)
    print('\t\thex: []string{')
    for s, _ in segs:
        print('\t\t\t"%s", // %s' % (h(bytes(s.data), s.groups), s.comment))
    print('\t\t},')
    print('\t\twant: []gopacket.Layer{')
    for s, go in segs:
        if go: print('\t\t\t%s,' % go)
    print('\t\t},')
    print('\t},')
print('}')
