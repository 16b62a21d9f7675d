// report-lib.js holds what report.js (roce-dissect's HTML report) uses
// that depends on no report data: number and time formatting, sortable
// tables and the marks drawn over a sequence chart. It sets
// window.roceLib.
(function () {
  'use strict';

  // ---- formatting ----
  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
  }
  function si(v, unit, digits) {
    const a = Math.abs(v);
    const p = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (const [m, s] of p) if (a >= m) return (v / m).toFixed(digits) + ' ' + s + unit;
    return (Number.isInteger(v) ? v : v.toFixed(digits)) + ' ' + unit;
  }
  const fmtBytes = (n) => si(n, 'B', 1);
  const fmtBps = (n) => (n == null ? '-' : si(n, 'b/s', 2));
  function fmtSecs(s, ref) {
    // ref picks the unit (a range or the value itself).
    const a = Math.abs(ref === undefined ? s : ref);
    if (a === 0 && s === 0) return '0 s';
    if (a < 1e-6) return (s * 1e9).toFixed(0) + ' ns';
    if (a < 1e-3) return (s * 1e6).toFixed(a < 1e-5 ? 3 : 1) + ' µs';
    if (a < 1) return (s * 1e3).toFixed(a < 1e-2 ? 3 : 1) + ' ms';
    return s.toFixed(a < 10 ? 3 : 1) + ' s';
  }
  // fmtTicks labels time ticks (seconds) in one unit, with as many
  // decimals as the step between them needs.
  function fmtTicks(splits) {
    const top = Math.max(...splits.map(Math.abs));
    const [mul, unit] = top < 1e-6 ? [1e9, 'ns'] : top < 1e-3 ? [1e6, 'µs'] : top < 1 ? [1e3, 'ms'] : [1, 's'];
    const dec = tickDecimals(splits.map((v) => v * mul));
    return splits.map((v) => (v * mul).toFixed(dec) + ' ' + unit);
  }
  // tickDecimals is the fewest decimals (up to 6) that write every tick
  // exactly, to a thousandth of the step between ticks: 0.25 ms steps
  // give 0.25, 0.50, 0.75, not 0.3, 0.5, 0.8.
  function tickDecimals(vals) {
    let step = 0;
    for (let k = 1; k < vals.length; k++) {
      const d = Math.abs(vals[k] - vals[k - 1]);
      if (d > 0 && (step === 0 || d < step)) step = d;
    }
    if (step === 0) step = Math.max(...vals.map(Math.abs)) || 1;
    for (let dec = 0; dec < 6; dec++) {
      const q = Math.pow(10, dec);
      if (vals.every((v) => Math.abs(Math.round(v * q) / q - v) <= step * 1e-3)) return dec;
    }
    return 6;
  }
  // fmtRateTicks labels throughput ticks (b/s) with one prefix and the
  // decimals the step needs.
  function fmtRateTicks(splits) {
    const top = Math.max(...splits.map(Math.abs));
    const [mul, unit] = [[1e12, 'Tb/s'], [1e9, 'Gb/s'], [1e6, 'Mb/s'], [1e3, 'kb/s'], [1, 'b/s']].find(([m]) => top >= m) || [1, 'b/s'];
    const dec = tickDecimals(splits.map((v) => v / mul));
    return splits.map((v) => (v / mul).toFixed(dec) + ' ' + unit);
  }
  const hexQP = (q) => '0x' + q.toString(16).padStart(6, '0');
  const num = (n) => Number(n).toLocaleString('en-US');

  // ---- tables ----
  // makeTable fills a <table> with columns {label, num, val(row), html(row)}
  // and rows; a header click sorts; a row click calls onClick(row).
  function makeTable(table, columns, rows, onClick, rowAttrs) {
    let sortCol = -1, dir = 1;
    let filter = () => true;
    const thead = document.createElement('thead');
    const tr = document.createElement('tr');
    columns.forEach((c, i) => {
      const th = document.createElement('th');
      th.textContent = c.label;
      if (c.num) th.className = 'num';
      if (c.title) th.title = c.title;
      th.addEventListener('click', () => {
        dir = sortCol === i ? -dir : (c.num ? -1 : 1);
        sortCol = i;
        thead.querySelectorAll('th').forEach((h) => h.classList.remove('asc', 'desc'));
        th.classList.add(dir > 0 ? 'asc' : 'desc');
        render();
      });
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    table.appendChild(thead);
    const tbody = document.createElement('tbody');
    table.appendChild(tbody);
    function render() {
      let rs = rows.filter(filter);
      if (sortCol >= 0) {
        const c = columns[sortCol];
        rs = rs.slice().sort((a, b) => {
          const x = c.val(a), y = c.val(b);
          if (x === y) return 0;
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : 1) * dir;
        });
      }
      const html = [];
      for (const r of rs) {
        html.push('<tr class="clickable" ' + rowAttrs(r) + '>' + columns.map((c) =>
          '<td' + (c.cls ? ' class="' + c.cls + '"' : c.num ? ' class="num"' : '') + '>' + (c.html ? c.html(r) : esc(c.val(r) ?? '-')) + '</td>').join('') + '</tr>');
      }
      if (rs.length === 0) html.push('<tr><td colspan="' + columns.length + '" class="hint">none</td></tr>');
      tbody.innerHTML = html.join('');
    }
    tbody.addEventListener('click', (ev) => {
      const row = ev.target.closest('tr[data-row]');
      if (row) {
        ev.preventDefault();
        onClick(rows[Number(row.dataset.row)]);
      }
    });
    render();
    return { render, setFilter: (f) => { filter = f; render(); } };
  }

  // Gap classes, as the report splits missing PSNs: lost in the network
  // (red), not captured (grey: capture-side drops, no problem of the
  // network), of unknown fate (amber).
  const GAP_CLASSES = [
    { key: 'lost', words: 'lost in the network', stroke: '#d62728', fill: 'rgba(214,39,40,0.35)', text: '#b71c1c' },
    { key: 'unknown', words: 'of unknown fate', stroke: '#c88a00', fill: 'rgba(200,138,0,0.35)', text: '#8a5a00' },
    { key: 'not_captured', words: 'not captured', stroke: '#8c8c8c', fill: 'rgba(140,140,140,0.35)', text: '#555' },
  ];
  // gapClass is the worst class of a gap's (or a group's) PSNs.
  const gapClass = (g) => GAP_CLASSES.find((c) => g[c.key] > 0) || GAP_CLASSES[1];
  const plural = (n, noun) => num(n) + ' ' + noun + (n === 1 ? '' : 's');

  // gapLabel says what a group of nearby gaps is: "gap: 3 PSNs not
  // captured", "12 gaps, 5,860 PSNs not captured", or by class when they
  // differ ("12 gaps, 5,860 PSNs: 40 lost in the network, 5,820 not
  // captured").
  function gapLabel(c) {
    const parts = GAP_CLASSES.filter((k) => c[k.key] > 0);
    const head = c.n === 1 ? 'gap: ' + plural(c.count, 'PSN') : plural(c.n, 'gap') + ', ' + plural(c.count, 'PSN');
    if (parts.length === 1) return head + ' ' + parts[0].words;
    return head + ': ' + parts.map((k) => num(c[k.key]) + ' ' + k.words).join(', ');
  }

  // gapLabels groups the drawn gaps (sorted by x) whose labels would
  // overlap into one label each, anchored at the group's first gap, until
  // no two labels overlap; it returns the groups with their boxes.
  function gapLabels(ctx, items, px, right) {
    const lh = 13 * px;
    const box = (c) => {
      const w = ctx.measureText(c.label).width;
      const lx = c.x + 7 * px + w > right ? c.x - 7 * px - w : c.x + 7 * px;
      return { l: lx - 2 * px, r: lx + w + 2 * px, t: c.y, b: c.y + lh, lx };
    };
    const overlap = (a, b) => a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
    const add = (c, g) => {
      c.n += g.n;
      c.count += g.count;
      for (const k of GAP_CLASSES) c[k.key] += g[k.key];
      c.label = gapLabel(c);
      c.box = box(c);
    };
    const groups = [];
    for (const it of items) {
      const g = { x: it.x, y: it.y, n: 1, count: it.g.count, lost: it.g.lost, unknown: it.g.unknown, not_captured: it.g.not_captured };
      g.label = gapLabel(g);
      g.box = box(g);
      const into = groups.find((c) => overlap(c.box, g.box));
      if (into) add(into, g);
      else groups.push(g);
    }
    // A label that grew may now cover another: merge until none does.
    for (let merged = true; merged;) {
      merged = false;
      for (let i = 0; i < groups.length && !merged; i++) {
        for (let j = i + 1; j < groups.length; j++) {
          if (overlap(groups[i].box, groups[j].box)) {
            add(groups[i], groups[j]);
            groups.splice(j, 1);
            merged = true;
            break;
          }
        }
      }
    }
    return groups;
  }

  // drawMarks draws the PSN gaps as bars coloured by the class of their
  // PSNs, one label for each group of nearby gaps, and the frame a
  // finding points at as a dashed line. It keeps the labels drawn in
  // u.gapLabels (for tests).
  function drawMarks(ch, mark, files) {
    return (u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.beginPath();
      ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
      ctx.clip();
      ctx.textAlign = 'left';
      ctx.textBaseline = 'alphabetic';
      const px = devicePixelRatio || 1;
      const items = [];
      for (const g of ch.gaps) {
        if (g.t_ns < 0) continue;
        const x = u.valToPos(g.t_ns / 1e9, 'x', true);
        const y1 = u.valToPos(g.from - 0.5, 'y', true);
        const y2 = u.valToPos(g.to + 0.5, 'y', true);
        const c = gapClass(g);
        ctx.fillStyle = c.fill;
        ctx.strokeStyle = c.stroke;
        ctx.lineWidth = px;
        const h = Math.max(Math.abs(y1 - y2), 3 * px);
        ctx.fillRect(x - 4 * px, Math.min(y1, y2), 8 * px, h);
        ctx.strokeRect(x - 4 * px, Math.min(y1, y2), 8 * px, h);
        const inside = x >= u.bbox.left && x <= u.bbox.left + u.bbox.width;
        if (inside) items.push({ x, y: Math.min(y1, y2), g });
      }
      ctx.font = (11 * px) + 'px sans-serif';
      items.sort((a, b) => a.x - b.x);
      const groups = gapLabels(ctx, items, px, u.bbox.left + u.bbox.width);
      for (const c of groups) {
        ctx.fillStyle = 'rgba(255,255,255,0.8)';
        ctx.fillRect(c.box.l, c.box.t, c.box.r - c.box.l, c.box.b - c.box.t);
        ctx.fillStyle = gapClass(c).text;
        ctx.fillText(c.label, c.box.lx, c.box.t + 10 * px);
      }
      u.gapLabels = groups.map((c) => ({ label: c.label, l: c.box.l / px, r: c.box.r / px, t: c.box.t / px, b: c.box.b / px }));
      const m = mark();
      if (m) {
        const x = u.valToPos(m.t_ns / 1e9, 'x', true);
        ctx.strokeStyle = '#333';
        ctx.setLineDash([5 * px, 4 * px]);
        ctx.lineWidth = px;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.setLineDash([]);
        const k = ch.frame.findIndex((fr, j) => fr === m.frame && (!ch.file || files[ch.file[j]] === m.file));
        if (k >= 0) {
          const y = u.valToPos(ch.y[k], 'y', true);
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 2 * px;
          ctx.beginPath();
          ctx.arc(x, y, 10 * px, 0, 2 * Math.PI);
          ctx.stroke();
        }
        ctx.fillStyle = '#000';
        ctx.font = 'bold ' + (11 * px) + 'px sans-serif';
        const label = 'frame ' + m.frame + ' (' + m.kind + ')';
        const w = ctx.measureText(label).width;
        const lx = x + 6 * px + w > u.bbox.left + u.bbox.width ? x - 6 * px - w : x + 6 * px;
        ctx.fillStyle = 'rgba(255,255,255,0.85)';
        ctx.fillRect(lx - 3 * px, u.bbox.top + 3 * px, w + 6 * px, 15 * px);
        ctx.fillStyle = '#000';
        ctx.fillText(label, lx, u.bbox.top + 14 * px);
      }
      ctx.restore();
    };
  }

  window.roceLib = { esc, si, fmtBytes, fmtBps, fmtSecs, fmtTicks, fmtRateTicks, hexQP, num, makeTable, drawMarks, GAP_CLASSES, plural };
})();
