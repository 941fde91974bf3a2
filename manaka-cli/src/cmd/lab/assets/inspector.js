// Part 2 of `manaka lab` (docs/lab.md): the inspector. The page keeps a start SFEN and the
// moves played; every change asks the server (POST /api/inspect) for the position after them,
// so the server's rules decide what is legal and its evaluator every number shown.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const CELL = 44, MARGIN = 22;
  const KANJI = { P: "歩", L: "香", N: "桂", S: "銀", G: "金", B: "角", R: "飛", K: "玉",
    "+P": "と", "+L": "杏", "+N": "圭", "+S": "全", "+B": "馬", "+R": "龍" };
  const HAND_ORDER = ["R", "B", "G", "S", "N", "L", "P"];
  let start = "startpos";
  let moves = [];
  let data = null;          // the last /api/inspect answer
  let selected = null;      // {from: sq} or {drop: "P"}
  let pendingPromotion = null;

  // Square index (SPEC §1): (file - 1) * 9 + (rank - 1); file 9 is drawn on the left.
  const sqOf = (file, rank) => (file - 1) * 9 + (rank - 1);
  const xy = (sq) => ({ x: MARGIN + (9 - (Math.floor(sq / 9) + 1)) * CELL, y: MARGIN + (sq % 9) * CELL });
  function parseSquare(s) { return sqOf(s.charCodeAt(0) - 48, s.charCodeAt(1) - 96); }
  // A USI move as {from, drop, to, promote}.
  function parseMove(usi) {
    if (usi[1] === "*") return { drop: usi[0], from: null, to: parseSquare(usi.slice(2, 4)), promote: false };
    return { drop: null, from: parseSquare(usi.slice(0, 2)), to: parseSquare(usi.slice(2, 4)), promote: usi.endsWith("+") };
  }

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const j = await r.json();
    if (!r.ok) throw new Error(j.error || r.statusText);
    return j;
  }

  async function refresh() {
    try {
      const j = await post("/api/inspect", { sfen: start, moves });
      data = j;
      $("ins-error").textContent = "";
      $("search-out").innerHTML = "";
      render();
    } catch (e) {
      $("ins-error").textContent = e.message;
      return false;
    }
    return true;
  }

  function pieceText(p) { return KANJI[p.toUpperCase()] || p; }

  function boardSvg() {
    const pos = data.position;
    const size = 2 * MARGIN + 9 * CELL;
    let s = `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" id="ins-svg">`;
    s += `<defs><marker id="arrow" markerWidth="6" markerHeight="6" refX="3" refY="3" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#c00"/></marker></defs>`;
    s += `<rect x="${MARGIN}" y="${MARGIN}" width="${9 * CELL}" height="${9 * CELL}" fill="#f3d9a4" stroke="#333" stroke-width="2"/>`;
    for (let f = 9; f >= 1; f--) s += `<text x="${MARGIN + (9 - f) * CELL + CELL / 2}" y="15" text-anchor="middle" font-size="12">${f}</text>`;
    for (let r = 1; r <= 9; r++) s += `<text x="${size - 12}" y="${MARGIN + (r - 1) * CELL + CELL / 2 + 4}" text-anchor="middle" font-size="12">${"abcdefghi"[r - 1]}</text>`;
    const last = pos.last_move ? parseMove(pos.last_move) : null;
    const targets = new Set(candidates().map((m) => m.to));
    for (let sq = 0; sq < 81; sq++) {
      const { x, y } = xy(sq);
      let fill = "none";
      if (last && (last.to === sq || last.from === sq)) fill = "#f7c873";
      if (selected && selected.from === sq) fill = "#9cf";
      if (targets.has(sq)) fill = "#bfe3b4";
      s += `<rect class="sq" pointer-events="all" data-sq="${sq}" x="${x}" y="${y}" width="${CELL}" height="${CELL}" fill="${fill}" stroke="#9a7b46"/>`;
      const p = pos.board[sq];
      if (p) {
        const white = p === p.toLowerCase();
        const cx = x + CELL / 2, cy = y + CELL / 2;
        const rot = white ? ` transform="rotate(180 ${cx} ${cy})"` : "";
        const colour = p.startsWith("+") ? "#b00" : "#111";
        s += `<text class="piece" data-sq="${sq}" data-piece="${p}" x="${cx}" y="${cy + 9}" text-anchor="middle" font-size="26" fill="${colour}"${rot} pointer-events="none">${pieceText(p)}</text>`;
      }
    }
    // The five most likely moves: arrows from origin to destination (a ring for a drop),
    // thicker and darker for a higher probability.
    data.eval.policy.slice(0, 5).forEach((m, i) => {
      const mv = parseMove(m.usi);
      const b = xy(mv.to);
      const tx = b.x + CELL / 2, ty = b.y + CELL / 2;
      const w = 2 + 8 * m.prob, op = 0.35 + 0.6 * Math.min(1, m.prob * 2);
      if (mv.drop) {
        s += `<circle class="arrow" data-usi="${m.usi}" cx="${tx}" cy="${ty}" r="${CELL / 2.6}" fill="none" stroke="#c00" stroke-width="${w}" opacity="${op}" pointer-events="none"/>`;
      } else {
        const a = xy(mv.from);
        s += `<line class="arrow" data-usi="${m.usi}" x1="${a.x + CELL / 2}" y1="${a.y + CELL / 2}" x2="${tx}" y2="${ty}" stroke="#c00" stroke-width="${w}" opacity="${op}" marker-end="url(#arrow)" pointer-events="none"/>`;
      }
      s += `<text x="${tx + CELL / 2 - 6}" y="${ty - CELL / 2 + 12}" font-size="11" fill="#c00" pointer-events="none">${i + 1}</text>`;
    });
    return s + "</svg>";
  }

  function handHtml(color) {
    const h = data.position.hands[color];
    const parts = HAND_ORDER.filter((k) => h[k] > 0).map((k) => {
      const sel = selected && selected.drop === k && data.position.side === color ? " sel" : "";
      return `<span class="hp${sel}" data-color="${color}" data-kind="${k}">${KANJI[k]}${h[k] > 1 ? h[k] : ""}</span>`;
    });
    return (color === "b" ? "☗ Black hand: " : "☖ White hand: ") + (parts.join(" ") || "—");
  }

  // The legal moves that start where the user has clicked.
  function candidates() {
    if (!selected || !data) return [];
    return data.position.legal.map(parseMove).map((m, i) => ({ ...m, usi: data.position.legal[i] }))
      .filter((m) => (selected.drop ? m.drop === selected.drop : m.from === selected.from));
  }

  function play(usi) {
    moves.push(usi);
    selected = null;
    pendingPromotion = null;
    $("promo").hidden = true;
    refresh().then((ok) => { if (!ok) moves.pop(); });
  }

  function clickSquare(sq) {
    if (!data) return;
    if (pendingPromotion) { pendingPromotion = null; $("promo").hidden = true; }
    const side = data.position.side;
    const p = data.position.board[sq];
    const own = p && ((p === p.toUpperCase()) === (side === "b"));
    const here = candidates().filter((m) => m.to === sq);
    if (here.length === 1) return play(here[0].usi);
    if (here.length === 2) {
      pendingPromotion = here;
      $("promo").hidden = false;
      return;
    }
    selected = own && !(selected && selected.from === sq) ? { from: sq } : null;
    render();
  }

  function heat(values, height) {
    const w = Math.max(1, Math.min(6, Math.floor(720 / Math.max(1, values.length))));
    const max = Math.max(1e-12, ...values.map(Math.abs));
    let s = `<svg class="strip" width="${w * values.length}" height="${height}">`;
    values.forEach((v, i) => {
      const t = Math.min(1, Math.abs(v) / max);
      const c = v >= 0 ? `rgb(255,${Math.round(255 * (1 - t))},${Math.round(255 * (1 - t))})` : `rgb(${Math.round(255 * (1 - t))},${Math.round(255 * (1 - t))},255)`;
      s += `<rect x="${i * w}" y="0" width="${w}" height="${height}" fill="${c}"><title>${i}: ${v.toPrecision(5)}</title></rect>`;
    });
    return s + "</svg>";
  }

  const range = (v) => v.length ? `min ${Math.min(...v).toPrecision(4)}, max ${Math.max(...v).toPrecision(4)}` : "empty";
  const side = (c) => (c === "b" ? "Black" : "White");
  const tokenList = (ts) => ts.map((t) => `${t.id} <span class="note">${t.meaning}</span>`).join(", ") || "none";

  function render() {
    if (!data) return;
    const pos = data.position, ev = data.eval;
    $("ins-board").innerHTML = boardSvg();
    $("hand-b").innerHTML = handHtml("b");
    $("hand-w").innerHTML = handHtml("w");
    document.querySelectorAll("#ins-board rect.sq").forEach((r) => r.addEventListener("click", () => clickSquare(+r.dataset.sq)));
    document.querySelectorAll(".hand .hp").forEach((h) => h.addEventListener("click", () => {
      if (h.dataset.color !== pos.side) return;
      selected = selected && selected.drop === h.dataset.kind ? null : { drop: h.dataset.kind };
      render();
    }));
    $("ins-moves").textContent = moves.join(" ") || "—";
    // The box shows the line as it can be pasted back (or into `manaka eval`).
    $("sfen-input").value = start + (moves.length ? " moves " + moves.join(" ") : "");
    $("ins-sfen").textContent = pos.sfen + (pos.in_check ? "  (in check)" : "") + `  — ${pos.legal.length} legal moves, ${side(pos.side)} to move`;
    $("ins-sfen").dataset.sfen = pos.sfen;

    $("ins-value").textContent = ev.value_logit.toFixed(6);
    $("ins-value").dataset.value = JSON.stringify(ev.value_logit);
    $("ins-win").textContent = ev.win_prob.toFixed(4);
    $("ins-win").dataset.value = JSON.stringify(ev.win_prob);
    $("ins-cp").textContent = ev.cp;
    $("ins-cp").dataset.value = ev.cp;
    $("ins-evaluator").textContent = ev.evaluator;
    $("ins-top").innerHTML = "<tr><th>#</th><th>move</th><th>prob</th><th>logit</th><th>label</th></tr>" +
      ev.policy.slice(0, 10).map((m, i) => `<tr class="top" data-usi="${m.usi}" data-prob="${m.prob}"><td>${i + 1}</td><td>${m.usi}</td><td>${m.prob.toFixed(4)}</td><td>${m.logit.toFixed(4)}</td><td>${m.label}</td></tr>`).join("");

    // Tokens and the last move's delta.
    const lm = data.last_move;
    $("ins-delta").innerHTML = lm ? `<p class="delta">last move <b>${lm.usi}</b>: ` + lm.deltas.map((d) =>
      `${side(d.color)}'s view: ` + (d.refresh ? `<b>refresh</b> (its own king moved: every HalfKP id holds the king square, so this perspective is rebuilt)`
        : `<span class="rm">− ${tokenList(d.removed)}</span> <span class="add">+ ${tokenList(d.added)}</span>`)).join("<br>") + "</p>"
      : `<p class="note">Play a move to see its token delta.</p>`;
    $("ins-tokens").innerHTML = data.perspectives.map((p, i) => {
      const added = new Set(lm ? lm.deltas.filter((d) => d.color === p.color).flatMap((d) => d.added.map((t) => t.id)) : []);
      const rows = p.tokens.map((t) => `<div${added.has(t.id) ? ' class="added"' : ""}>${t.id} — ${t.meaning}</div>`).join("");
      return `<div><b>${side(p.color)}'s view</b> (${i === 0 ? "side to move" : "other side"}), ${p.tokens.length} tokens<div class="tokens" data-color="${p.color}">${rows}</div></div>`;
    }).join("");

    // Accumulator blocks.
    $("ins-blocks").innerHTML = data.perspectives.map((p) => {
      let s = `<h4>${side(p.color)}'s view</h4>`;
      for (const ps of p.power_sums) s += `<div>power sum ${ps.name} (${ps.values.length}): ${range(ps.values)}${heat(ps.values, 10)}</div>`;
      for (const b of p.blocks) {
        s += `<div>block <b>${b.name}</b> (${b.raw.length} wide), RMS ${b.rms.toPrecision(5)}: raw ${range(b.raw)}${heat(b.raw, 10)}` +
          `normalised ${range(b.input)}${heat(b.input, 10)}</div>`;
      }
      return s;
    }).join("");
    $("ins-hidden").innerHTML = data.hidden.map((h, i) => {
      const active = h.filter((x) => x > 0).length;
      return `<div>layer ${i + 1}: ${h.length} units, ${active} active (> 0), ${range(h)}${heat(h, 18)}</div>`;
    }).join("") + `<p class="note">value logit = w_v · h + b_v = ${data.reference_value_logit.toFixed(6)} in the reference evaluator's f64 arithmetic.</p>`;
  }

  async function search() {
    $("search-out").textContent = "searching…";
    try {
      const sims = parseInt($("search-sims").value, 10) || 64;
      const r = await post("/api/search", { sfen: start, moves, simulations: sims });
      $("search-out").innerHTML = `<p>best <b id="search-best">${r.bestmove || "resign"}</b>, root value ${r.root_value.toFixed(4)} (cp ${r.score_cp}), ${r.simulations} simulations on ${r.evaluator}</p>` +
        `<p>PV: <span id="search-pv">${r.pv.join(" ")}</span></p>` +
        "<table class='list'><tr><th>move</th><th>visits</th><th>prior</th><th>improved policy</th><th>Q</th></tr>" +
        r.moves.map((m) => `<tr><td>${m.usi}</td><td>${m.visits}</td><td>${m.prior.toFixed(4)}</td><td>${m.improved_policy.toFixed(4)}</td><td>${m.q === null ? "—" : m.q.toFixed(4)}</td></tr>`).join("") + "</table>";
    } catch (e) {
      $("search-out").textContent = "";
      $("ins-error").textContent = e.message;
    }
  }

  function init() {
    $("sfen-set").onclick = () => {
      const text = $("sfen-input").value.trim();
      const [sfen, rest] = text.split(/\s+moves\s+/);
      const oldStart = start, oldMoves = moves;
      start = sfen || "startpos";
      moves = rest ? rest.split(/\s+/) : [];
      selected = null;
      refresh().then((ok) => { if (!ok) { start = oldStart; moves = oldMoves; } });
    };
    $("ins-undo").onclick = () => { if (moves.length) { moves.pop(); selected = null; refresh(); } };
    $("promo-yes").onclick = () => pendingPromotion && play(pendingPromotion.find((m) => m.promote).usi);
    $("promo-no").onclick = () => pendingPromotion && play(pendingPromotion.find((m) => !m.promote).usi);
    $("search-go").onclick = search;
    fetch("/api/network").then((r) => r.json()).then((n) => {
      $("ins-network").textContent = `network ${n.shape} (${n.source}), ${n.parameters.toLocaleString("en")} parameters, ${n.features} tokens (T = ${n.tokens}); value, policy and search on ${n.evaluator}`;
    });
    refresh();
  }

  init();
})();
