// report.js renders roce-dissect's HTML report from the JSON block
// #report-data: tables, and per flow a PSN-over-time sequence chart and a
// throughput chart drawn with uPlot.
(function () {
  'use strict';

  const D = JSON.parse(document.getElementById('report-data').textContent);
  const R = D.report;
  const T0 = R.capture.first_time;
  const multi = D.files.length > 1;

  // Categories of chart points (keep in step with chart.go).
  const CATS = [
    { name: 'request', color: '#1f77b4', size: 4 },
    { name: 'resent (retransmission, duplicate)', color: '#ff7f0e', size: 7 },
    { name: 'out of order', color: '#9467bd', size: 7 },
    { name: 'request after PSNs lost in the network', color: '#d62728', size: 7 },
    { name: 'ACK', color: '#2ca02c', size: 4 },
    { name: 'READ response', color: '#17becf', size: 4 },
    { name: 'NAK', color: '#b71c1c', size: 11 },
    { name: 'RNR NAK', color: '#e377c2', size: 11 },
    { name: 'CNP', color: '#8c564b', size: 9 },
    { name: 'request after PSNs of unknown fate', color: '#c88a00', size: 7 },
    { name: 'request after PSNs not captured', color: '#8c8c8c', size: 7 },
  ];
  // The legend's order of the categories: those after a gap together.
  const CAT_ORDER = [0, 1, 2, 3, 9, 10, 4, 5, 6, 7, 8];

  const { esc, si, fmtBytes, fmtBps, fmtSecs, fmtTicks, fmtRateTicks, hexQP, num, makeTable, drawMarks, GAP_CLASSES, plural } = window.roceLib;

  // missingSplit is a flow's missing PSNs by class, as the report counts
  // them: lost in the network, not captured, of unknown fate.
  function missingSplit(r) {
    const lost = r.missing_lost || 0, nc = r.missing_not_captured || 0;
    return { lost, not_captured: nc, unknown: Math.max(0, r.missing - lost - nc) };
  }
  // missingCell shows a flow's missing PSNs in the colour of their worst
  // class (red only for PSNs lost in the network), the split in words
  // when not all are lost, and in its title.
  function missingCell(r) {
    if (!r.missing) return '0';
    const m = missingSplit(r);
    const parts = GAP_CLASSES.filter((c) => m[c.key] > 0);
    const title = parts.map((c) => num(m[c.key]) + ' ' + c.words).join(', ');
    const words = parts.length === 1 && parts[0].key === 'lost' ? '' : ' <span class="miss-words">(' + esc(title) + ')</span>';
    return '<span class="miss-' + parts[0].key + '" title="' + esc(title) + '">' + num(r.missing) + '</span>' + words;
  }

  // ---- summary and connections ----
  function renderSummary() {
    const c = R.capture;
    const sev = D.finding_counts; // all the report's findings, listed here or not
    const items = [
      ['Files', D.files.map(esc).join(', ')],
      ['Frames', num(c.frames) + ': ' + num(c.roce_packets) + ' RDMA, ' + num(c.other_packets) + ' other, ' +
        (c.malformed ? '<span class="bad">' + num(c.malformed) + ' malformed</span>' : '0 malformed')],
      ['Bytes', fmtBytes(c.bytes)],
      ['Time', c.first_time ? esc(c.first_time) + ' to ' + esc(c.last_time) + ' (' + fmtSecs(c.duration_seconds) + ')' : '-'],
      ['Flows', num(D.flows_total) + (c.flows_dropped ? ' (<span class="bad">about ' + num(c.flows_dropped) + ' more not tracked</span>)' : '') +
        (D.flows_more.flows ? '; ' + num(R.flows.length) + ' listed here' : '') + '; ' + num(D.charts) + ' charted'],
      ...(c.not_captured ? [['Not captured', '<span class="miss-not_captured">the capture missed ' + plural(c.not_captured, 'request packet') +
        ' that the responders acknowledged (capture-side drops, not network loss)</span>']] : []),
      ['Connections', num(D.connections_total)],
      ['Findings', '<span class="sev-error">' + sev.error + ' errors</span>, <span class="sev-warning">' + sev.warning +
        ' warnings</span>, <span class="sev-info">' + sev.info + ' info</span>' + (R.findings_dropped ? ' (' + num(R.findings_dropped) + ' more not listed)' : '') +
        (D.findings_more ? '; the worst ' + num(R.findings.length) + ' listed here (-o json lists them all)' : '')],
    ];
    document.getElementById('summary-body').innerHTML = '<dl class="summary">' +
      items.map(([k, v]) => '<dt>' + k + '</dt><dd>' + v + '</dd>').join('') + '</dl>';
  }

  function renderConnections() {
    const el = document.getElementById('connections-body');
    if (R.connections.length === 0) {
      el.innerHTML = '<p class="hint">No CM handshake in the capture.</p>';
      return;
    }
    const t = document.createElement('table');
    const div = document.createElement('div');
    div.className = 'scroll';
    div.appendChild(t);
    el.appendChild(div);
    const frames = (c) => ['req', 'rep', 'rtu', 'rej', 'dreq', 'drep'].filter((k) => c.frames[k]).map((k) => k.toUpperCase() + ' ' + c.frames[k]).join(' ');
    makeTable(t, [
      { label: '#', num: true, val: (c) => c.id },
      { label: 'Transport', val: (c) => c.transport ?? '?' },
      { label: 'Requester', val: (c) => c.requester.ip },
      { label: 'QPN', val: (c) => c.requester.qpn, html: (c) => (c.requester.qpn == null ? '?' : hexQP(c.requester.qpn)) },
      { label: 'Sends from PSN', num: true, val: (c) => c.requester.send_psn ?? '?' },
      { label: 'Responder', val: (c) => c.responder.ip },
      { label: 'QPN', val: (c) => c.responder.qpn, html: (c) => (c.responder.qpn == null ? '?' : hexQP(c.responder.qpn)) },
      { label: 'Sends from PSN', num: true, val: (c) => c.responder.send_psn ?? '?' },
      { label: 'MTU', num: true, val: (c) => c.path_mtu ?? '?' },
      { label: 'State', val: (c) => c.state, html: (c) => esc(c.state) + (c.reject_reason ? ' (' + esc(c.reject_reason) + ')' : '') },
      { label: 'Service', val: (c) => c.service_id ?? '?', html: (c) => esc(c.service_id ?? '?') + (c.rdma_cm_port_space ? ' (RDMA-CM ' + esc(c.rdma_cm_port_space) + ' port ' + c.rdma_cm_port + ')' : '') },
      { label: 'CM frames', val: frames },
    ], R.connections.map((c, i) => Object.assign({ _i: i }, c)), () => {}, (c) => 'data-row="' + c._i + '"');
    if (D.connections_total > R.connections.length) {
      const p = document.createElement('p');
      p.id = 'connections-more';
      p.className = 'hint';
      p.textContent = num(D.connections_total - R.connections.length) + ' more connections — see -o json (the page lists the first ' + num(R.connections.length) + ').';
      el.appendChild(p);
    }
  }

  // ---- flows ----
  const flowFindings = R.flows.map(() => 0);
  D.findings.forEach((x) => { if (x.flow >= 0) flowFindings[x.flow]++; });

  const flowRows = R.flows.map((f, i) => ({ i, f, x: D.flows[i] }));
  function renderFlows() {
    const bad = (v) => (v ? '<span class="bad">' + num(v) + '</span>' : '0');
    const cols = [
      { label: '#', num: true, val: (r) => r.i + 1 },
      { label: 'Source', val: (r) => r.f.src },
      { label: 'Destination', val: (r) => r.f.dst },
      { label: 'QP', val: (r) => r.f.dest_qp, html: (r) => hexQP(r.f.dest_qp) },
      { label: 'Transport', val: (r) => r.f.transport },
      { label: 'Conn', num: true, val: (r) => r.f.connection },
      { label: 'Packets', num: true, val: (r) => r.f.packets, html: (r) => num(r.f.packets) },
      { label: 'Payload', num: true, val: (r) => r.f.payload_bytes, html: (r) => fmtBytes(r.f.payload_bytes) },
      { label: 'Duration', num: true, val: (r) => r.x.duration_ns, html: (r) => fmtSecs(r.x.duration_ns / 1e9) },
      { label: 'Throughput', num: true, title: 'payload rate over the flow\'s duration', val: (r) => r.f.throughput_bps, html: (r) => fmtBps(r.f.throughput_bps) },
      { label: 'Active', num: true, title: 'payload rate while its messages were on the wire', val: (r) => r.f.active_throughput_bps, html: (r) => fmtBps(r.f.active_throughput_bps) },
      { label: 'MTU inf/neg', num: true, val: (r) => r.f.mtu.inferred, html: (r) => (r.f.mtu.inferred ?? '-') + '/' + (r.f.mtu.negotiated ?? '-') },
      { label: 'Missing', num: true, title: 'PSNs never seen: lost in the network (red), not captured (grey: capture-side drops), of unknown fate (amber)', val: (r) => r.f.requests.missing, html: (r) => missingCell(r.f.requests) },
      { label: 'Retx', num: true, val: (r) => r.f.requests.retransmitted, html: (r) => bad(r.f.requests.retransmitted) },
      { label: 'Dup', num: true, val: (r) => r.f.requests.duplicates, html: (r) => bad(r.f.requests.duplicates) },
      { label: 'OOO', num: true, title: 'out of order', val: (r) => r.f.requests.out_of_order, html: (r) => bad(r.f.requests.out_of_order) },
      { label: 'NAKs', num: true, val: (r) => r.f.responses.naks, html: (r) => bad(r.f.responses.naks) },
      { label: 'RNR', num: true, title: 'RNR NAKs', val: (r) => r.f.responses.rnr_naks, html: (r) => bad(r.f.responses.rnr_naks) },
      { label: 'CNPs', num: true, val: (r) => r.f.congestion.cnps, html: (r) => num(r.f.congestion.cnps) },
      { label: 'ECN-CE', num: true, val: (r) => r.f.congestion.ecn_ce, html: (r) => num(r.f.congestion.ecn_ce) },
      ...pauseColumns(),
      { label: 'ICRC err', num: true, val: (r) => r.f.icrc.bad, html: (r) => bad(r.f.icrc.bad) },
      { label: 'RTT median', num: true, val: (r) => (r.f.responses.rtt ? r.f.responses.rtt.median_ns : null), html: (r) => (r.f.responses.rtt ? fmtSecs(r.f.responses.rtt.median_ns / 1e9) : '-') },
      { label: 'Findings', num: true, val: (r) => flowFindings[r.i], html: (r) => num(flowFindings[r.i]) },
    ];
    const tbl = makeTable(document.getElementById('flow-table'), cols, flowRows, (r) => selectFlow(r.i, null, true),
      (r) => 'data-row="' + r.i + '" data-flow="' + r.i + '" data-name="' + esc(r.x.name) + '"');
    document.getElementById('flow-filter').addEventListener('input', (ev) => {
      const q = ev.target.value.trim().toLowerCase();
      tbl.setFilter((r) => !q || (r.x.name + ' ' + r.f.transport + ' ' + hexQP(r.f.dest_qp)).toLowerCase().includes(q));
      markSelected();
    });
    const more = D.flows_more;
    if (more.flows) {
      const p = document.createElement('p');
      p.id = 'flows-more';
      p.className = 'hint';
      p.textContent = num(more.flows) + ' more flows (' + num(more.packets) + ' packets, ' + fmtBytes(more.wire_bytes) +
        ') — see -o json. The page lists at most ' + num(D.bounds.rows) + ' flows: every flow with a problem, then those with the most bytes.';
      document.getElementById('flow-table').parentNode.after(p);
    }
    const pick = document.getElementById('flow-picker');
    pick.innerHTML = flowRows.map((r) => '<option value="' + r.i + '">#' + (r.i + 1) + ' ' + esc(r.x.name) + ' — ' + esc(r.f.transport) +
      ', ' + num(r.f.packets) + ' packets' + (flowFindings[r.i] ? ', ' + flowFindings[r.i] + ' findings' : '') + (r.x.chart ? '' : ' (no chart)') + '</option>').join('');
    pick.addEventListener('change', () => selectFlow(Number(pick.value), null, false));
  }

  // pauseColumns are the flow's priority and the time it was paused,
  // when the capture holds pause frames (the analyzer then gives every
  // flow whose priority it knows a paused time, absent for none).
  function pauseColumns() {
    if (!R.flows.some((f) => f.priority != null)) return [];
    const paused = (f) => (f.priority == null ? null : f.paused_ns ?? 0);
    return [
      { label: 'Prio', num: true, title: '802.1p priority: VLAN PCP, else DSCP (--dscp-priority)', val: (r) => r.f.priority },
      { label: 'Paused', num: true, title: 'time its priority was paused (PFC, PAUSE) between its first and last packet', val: (r) => paused(r.f),
        html: (r) => (paused(r.f) == null ? '-' : fmtSecs(paused(r.f) / 1e9)) },
    ];
  }

  function markSelected() {
    document.querySelectorAll('#flow-table tbody tr').forEach((tr) => tr.classList.toggle('selected', Number(tr.dataset.flow) === state.flow));
    document.querySelectorAll('#finding-table tbody tr').forEach((tr) => tr.classList.toggle('selected', Number(tr.dataset.row) === state.finding));
  }

  // ---- findings ----
  function renderFindings() {
    const rows = R.findings.map((f, i) => ({ i, f, x: D.findings[i] }));
    const order = { error: 0, warning: 1, info: 2 };
    const cols = [
      { label: 'Severity', val: (r) => order[r.f.severity], html: (r) => '<span class="sev-' + esc(r.f.severity) + '">' + esc(r.f.severity.toUpperCase()) + '</span>' },
      { label: 'Frame', num: true, val: (r) => r.f.frame },
    ];
    if (multi) cols.push({ label: 'File', val: (r) => r.f.file || '' });
    cols.push(
      { label: 'Time', num: true, val: (r) => r.x.t_ns, html: (r) => fmtSecs(r.x.t_ns / 1e9) },
      { label: 'Kind', val: (r) => r.f.kind },
      { label: 'Flow', val: (r) => r.f.flow, html: (r) => (r.x.flow >= 0 ? '<a href="#chart" class="flow-link">' + esc(r.f.flow) + '</a>' : esc(r.f.flow || '-')) },
      { label: 'Detail', cls: 'detail', val: (r) => r.f.detail },
    );
    const tbl = makeTable(document.getElementById('finding-table'), cols, rows, (r) => {
      state.finding = r.i;
      if (r.x.flow >= 0) selectFlow(r.x.flow, { frame: r.f.frame, file: r.f.file || '', t_ns: r.x.t_ns, kind: r.f.kind }, true);
      markSelected();
    }, (r) => 'data-row="' + r.i + '" data-frame="' + r.f.frame + '" data-flow="' + r.x.flow + '"');
    document.getElementById('severity-filter').addEventListener('change', (ev) => {
      const v = ev.target.value;
      tbl.setFilter((r) => !v || r.f.severity === v);
      markSelected();
    });
  }

  // ---- charts ----
  const state = { flow: -1, mark: null, finding: -1, psn: null, tput: null, points: [], ready: false };
  let syncing = false;

  function chartWidth() {
    return Math.max(400, document.getElementById('chart').clientWidth - 10);
  }

  function xAxis(label) {
    return {
      label,
      values: (u, splits) => fmtTicks(splits),
      size: 40,
    };
  }

  function syncScale(other) {
    return (u, key) => {
      if (key !== 'x' || syncing || !other()) return;
      syncing = true;
      other().setScale('x', { min: u.scales.x.min, max: u.scales.x.max });
      syncing = false;
    };
  }

  function selectFlow(i, mark, scroll) {
    if (i < 0 || i >= R.flows.length) return;
    state.flow = i;
    state.mark = mark;
    if (!mark) state.finding = -1;
    document.getElementById('flow-picker').value = String(i);
    const x = D.flows[i];
    const f = R.flows[i];
    document.getElementById('chart-title').textContent = 'Flow #' + (i + 1) + ': ' + x.name + ' (' + f.transport + ')';
    const psnEl = document.getElementById('psn-chart');
    const tputEl = document.getElementById('tput-chart');
    if (state.psn) { state.psn.destroy(); state.psn = null; }
    if (state.tput) { state.tput.destroy(); state.tput = null; }
    psnEl.innerHTML = '';
    tputEl.innerHTML = '';
    document.getElementById('chart-info').textContent = '';
    state.points = [];
    state.ready = false;
    const ch = x.chart;
    const note = [];
    if (!ch) {
      note.push(D.charts >= D.bounds.charts ? 'No chart for this flow: the page charts at most ' + D.bounds.charts +
        ' flows (those with problems, then the most bytes, among the first ' + D.limits.Flows + ' flows of each file).' :
        'No packet of this flow to chart' + (D.flows_total > D.limits.Flows ? ' (only the first ' + D.limits.Flows + ' flows of each file are charted).' : '.'));
    } else {
      const name = (j) => '#' + (j + 1) + ' ' + D.flows[j].name;
      if (ch.data_flow >= 0 && ch.resp_flow >= 0 && ch.data_flow !== ch.resp_flow) {
        note.push('Requests of flow ' + esc(name(ch.data_flow)) + '; ACKs, NAKs, READ responses and CNPs of its reverse flow ' + esc(name(ch.resp_flow)) + '.');
      } else if (ch.data_flow >= 0) {
        note.push('Requests of this flow (no reverse flow with its ACKs found).');
      } else {
        note.push('Responses and CNPs of this flow (no request flow found).');
      }
      if (ch.points) {
        note.push('Packets as captured at ' + ch.points.map(esc).join(' and ') + ' (of the capture points, the first given that saw the flow), each packet once.');
      }
      note.push('Showing ' + num(ch.shown) + ' of ' + num(ch.packets) + ' packets' +
        (ch.stride > 1 ? '; ordinary packets decimated evenly (about every ' + ch.stride + 'th kept; at most ' + num(D.bounds.points) + ' points over the ' + D.charts + ' charts)' : '') +
        (ch.marked_dropped ? '; ' + num(ch.marked_dropped) + ' marked packets beyond ' + D.limits.Marked + ' per flow not drawn' : '') +
        '. PSNs are unwrapped across 2^24; the axis shows them modulo 2^24.');
      const gm = { lost: 0, not_captured: 0, unknown: 0 };
      ch.gaps.forEach((g) => GAP_CLASSES.forEach((c) => { gm[c.key] += g[c.key]; }));
      const gparts = GAP_CLASSES.filter((c) => gm[c.key] > 0);
      if (gparts.length) {
        note.push('Missing PSNs (bars): ' + gparts.map((c) => '<span class="miss-' + c.key + '">' + num(gm[c.key]) + ' ' + c.words + '</span>').join(', ') +
          (gm.not_captured ? ' (capture-side drops: the responder acknowledged them)' : '') + '.');
      }
      drawPSN(ch, psnEl);
    }
    document.getElementById('chart-note').innerHTML = note.join(' ');
    drawTput(x.tput, f, tputEl);
    // uPlot sets its initial ranges after the charts are built: align the
    // two time axes (and zoom to the marked frame) in the next task.
    const psn = state.psn, tput = state.tput;
    setTimeout(() => {
      if (!psn || psn !== state.psn) return;
      if (tput) {
        const lo = Math.min(psn.scales.x.min, tput.scales.x.min);
        const hi = Math.max(psn.scales.x.max, tput.scales.x.max);
        psn.setScale('x', { min: lo, max: hi });
      }
      if (mark) zoomTo(ch, mark);
      state.ready = true;
    }, 0);
    markSelected();
    if (history.replaceState) history.replaceState(null, '', '#flow=' + (i + 1) + (mark ? '&frame=' + mark.frame : ''));
    if (scroll) document.getElementById('chart').scrollIntoView({ block: 'start' });
  }

  // zoomTo shows the packets around a finding's frame (about 60 on each
  // side) when the chart holds many more; a double-click zooms out.
  function zoomTo(ch, mark) {
    const n = ch.t_ns.length;
    if (n < 200) return;
    let k = ch.frame.findIndex((fr, j) => fr === mark.frame && (!ch.file || D.files[ch.file[j]] === mark.file));
    if (k < 0) k = Math.max(0, ch.t_ns.findIndex((t) => t >= mark.t_ns));
    // As wide on both sides: the narrower of the two, so that a pause on
    // one side does not squeeze the packets around the frame.
    const t = ch.t_ns[k];
    const left = t - ch.t_ns[Math.max(0, k - 60)];
    const right = ch.t_ns[Math.min(n - 1, k + 60)] - t;
    const w = (Math.min(left, right) || Math.max(left, right)) * 1.05;
    if (w > 0) state.psn.setScale('x', { min: (t - w) / 1e9, max: (t + w) / 1e9 });
  }

  function drawPSN(ch, el) {
    const n = ch.t_ns.length;
    const xs = new Array(n);
    const series = CATS.map(() => new Array(n).fill(null));
    const ecn = new Array(n).fill(null);
    for (let k = 0; k < n; k++) {
      xs[k] = ch.t_ns[k] / 1e9;
      series[ch.cat[k]][k] = ch.y[k];
      if (ch.ecn[k]) ecn[k] = ch.y[k];
      state.points.push({ frame: ch.frame[k], psn: ch.psn[k], y: ch.y[k], cat: CATS[ch.cat[k]].name, ecn: !!ch.ecn[k], t_ns: ch.t_ns[k], file: ch.file ? D.files[ch.file[k]] : D.files[0] });
    }
    const used = CATS.map((c, ci) => series[ci].some((v) => v !== null));
    const opts = {
      width: chartWidth(),
      height: 380,
      cursor: { sync: { key: 'roce' }, points: { size: 10 } },
      scales: { x: { time: false }, y: { range: (u, lo, hi) => (lo === hi ? [lo - 5, hi + 5] : [lo - (hi - lo) * 0.04 - 1, hi + (hi - lo) * 0.04 + 1]) } },
      legend: { live: false },
      axes: [
        xAxis('time since the capture began'),
        {
          label: 'PSN',
          size: 80,
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7],
          values: (u, splits) => splits.map((v) => String(((v % 16777216) + 16777216) % 16777216)),
        },
      ],
      series: [{ label: 'time' }],
      hooks: {
        draw: [drawMarks(ch, () => state.mark, D.files)],
        setCursor: [showInfo(ch)],
        setScale: [syncScale(() => state.tput)],
      },
    };
    const data = [xs];
    CAT_ORDER.forEach((ci) => {
      const c = CATS[ci];
      if (!used[ci]) return;
      opts.series.push({ label: c.name, stroke: c.color, fill: c.color, paths: () => null, points: { show: true, size: c.size, fill: c.color, stroke: c.color, width: 1 } });
      data.push(series[ci]);
    });
    if (ecn.some((v) => v !== null)) {
      opts.series.push({ label: 'ECN-CE mark', stroke: '#f0a000', paths: () => null, points: { show: true, size: 14, fill: 'rgba(0,0,0,0)', stroke: '#f0a000', width: 2 } });
      data.push(ecn);
    }
    state.psn = new uPlot(opts, data, el);
  }

  function showInfo(ch) {
    return (u) => {
      const k = u.cursor.idx;
      const el = document.getElementById('chart-info');
      if (k == null || k < 0 || k >= ch.t_ns.length) { el.textContent = ''; return; }
      const file = ch.file ? D.files[ch.file[k]] + ' ' : '';
      el.textContent = file + 'frame ' + ch.frame[k] + ' · ' + CATS[ch.cat[k]].name + (ch.cat[k] === 8 ? '' : ' · PSN ' + ch.psn[k]) +
        (ch.ecn[k] ? ' · ECN-CE' : '') + ' · ' + fmtSecs(ch.t_ns[k] / 1e9) + ' after the first frame';
    };
  }

  function drawTput(tp, f, el) {
    if (!tp || tp.t_ns.length === 0) {
      el.innerHTML = '<p class="hint">No throughput series.</p>';
      return;
    }
    const xs = tp.t_ns.map((t) => t / 1e9);
    const stepped = uPlot.paths.stepped({ align: 1 });
    const ymax = Math.max(0, ...tp.payload_bps, ...tp.wire_bps);
    const opts = {
      width: chartWidth(),
      height: 220,
      cursor: { sync: { key: 'roce' } },
      // y from the whole series, not only the points inside the x range.
      scales: { x: { time: false }, y: { range: () => [0, ymax > 0 ? ymax * 1.08 : 1] } },
      axes: [xAxis('time since the capture began'), { label: 'throughput', size: 95, values: (u, splits) => fmtRateTicks(splits) }],
      series: [
        { label: 'time', value: (u, v) => (v == null ? '-' : fmtSecs(v)) },
        { label: 'payload (per ' + fmtSecs(tp.interval_ns / 1e9) + ')', stroke: '#1f77b4', fill: 'rgba(31,119,180,0.12)', width: 1.5, paths: stepped, value: (u, v) => fmtBps(v) },
        { label: 'wire', stroke: '#7f7f7f', width: 1, dash: [4, 3], paths: stepped, value: (u, v) => fmtBps(v) },
      ],
      hooks: { setScale: [syncScale(() => state.psn)] },
    };
    state.tput = new uPlot(opts, [xs, tp.payload_bps, tp.wire_bps], el);
  }

  // On a change of width, resize the charts and keep their time range.
  let lastWidth = chartWidth();
  window.addEventListener('resize', () => {
    const w = chartWidth();
    if (w === lastWidth || !state.psn) return;
    lastWidth = w;
    const x = { min: state.psn.scales.x.min, max: state.psn.scales.x.max };
    state.psn.setSize({ width: w, height: 380 });
    if (state.tput) state.tput.setSize({ width: w, height: 220 });
    state.psn.setScale('x', x);
  });

  // Exposed for tests and the curious: the selected flow and the points
  // drawn on its sequence chart.
  window.roceReport = {
    data: D,
    state,
    selectFlow: (i) => selectFlow(i, null, false),
    chartPoints: () => state.points.slice(),
    fmtTicks,
    fmtRateTicks,
  };

  renderSummary();
  renderConnections();
  renderFlows();
  renderFindings();

  // Start on the flow of a #flow=N&frame=M link, else on the charted flow
  // with the most findings, then the most packets.
  let start = -1;
  let startMark = null;
  const h = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (h.has('flow')) start = Number(h.get('flow')) - 1;
  if (start >= 0 && h.has('frame')) {
    const fr = Number(h.get('frame'));
    const k = R.findings.findIndex((x, j) => D.findings[j].flow === start && x.frame === fr);
    if (k >= 0) {
      startMark = { frame: fr, file: R.findings[k].file || '', t_ns: D.findings[k].t_ns, kind: R.findings[k].kind };
      state.finding = k;
    }
  }
  if (!(start >= 0 && start < R.flows.length)) {
    start = -1;
    flowRows.forEach((r) => {
      if (!r.x.chart) return;
      if (start < 0 || flowFindings[r.i] > flowFindings[start] ||
        (flowFindings[r.i] === flowFindings[start] && r.f.packets > R.flows[start].packets)) start = r.i;
    });
    if (start < 0 && R.flows.length) start = 0;
  }
  if (start >= 0) selectFlow(start, startMark, false);
  else document.getElementById('chart-title').textContent = 'No flow in the capture.';
})();
