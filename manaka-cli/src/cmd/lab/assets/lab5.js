// Part 1 of `manaka lab` (docs/lab.md): the 5×5 Mini NNUE.
//
// Squares are numbered row-major from the top left, 0..24. A feature is (king square,
// silver square): id = king * 25 + silver, 625 in all. The network is
// 625 -> 16 -> ReLU -> 8 -> ReLU -> 1 with weights drawn in [-0.1, 0.1) from a seeded
// generator, so a seed gives the same network in every browser.
"use strict";

const Lab5 = (() => {
  const N_SQ = 25, N_FEAT = 625, H1 = 16, H2 = 8;
  const EMPTY = 0, KING = 1, SILVER = 2;
  const GLYPH = ["", "玉", "銀"];

  // xorshift32 with a splitmix-style seed scramble: small, deterministic, good enough to
  // draw weights (not for anything statistical).
  function rng(seed) {
    let s = (Math.imul((seed >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35) >>> 0;
    if (s === 0) s = 0x6d2b79f5;
    return () => {
      s ^= s << 13; s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5; s >>>= 0;
      return s / 4294967296;
    };
  }

  function matrix(rows, cols, next) {
    return Array.from({ length: rows }, () => Array.from({ length: cols }, () => (next() - 0.5) * 0.2));
  }

  function newNet(seed) {
    const next = rng(seed);
    return {
      W1: matrix(H1, N_FEAT, next), b1: matrix(1, H1, next)[0],
      W2: matrix(H2, H1, next), b2: matrix(1, H2, next)[0],
      W3: matrix(1, H2, next), b3: matrix(1, 1, next)[0],
    };
  }

  function cloneNet(n) { return JSON.parse(JSON.stringify(n)); }

  // Every weight and bias, counted from the arrays themselves.
  function paramCount(n) {
    const count = (m) => (Array.isArray(m[0]) ? m.reduce((a, r) => a + r.length, 0) : m.length);
    return ["W1", "b1", "W2", "b2", "W3", "b3"].reduce((a, k) => a + count(n[k]), 0);
  }

  // Active features of a board (array of 25): one per silver, if there is a king.
  function features(board) {
    const king = board.indexOf(KING);
    if (king < 0) return [];
    const out = [];
    board.forEach((p, sq) => { if (p === SILVER) out.push(king * N_SQ + sq); });
    return out;
  }

  const relu = (x) => (x > 0 ? x : 0);

  // h1 before ReLU: b1 plus the W1 column of each active feature (the accumulator).
  function accumulate(net, feats) {
    const acc = net.b1.slice();
    for (const f of feats) for (let i = 0; i < H1; i++) acc[i] += net.W1[i][f];
    return acc;
  }

  // The rest of the network from the accumulator: ReLU, W2, ReLU, W3.
  function head(net, acc) {
    const h1 = acc.map(relu);
    const h2pre = net.b2.map((b, i) => b + net.W2[i].reduce((s, w, j) => s + w * h1[j], 0));
    const h2 = h2pre.map(relu);
    const score = net.b3[0] + net.W3[0].reduce((s, w, j) => s + w * h2[j], 0);
    return { h1, h2, h2pre, score };
  }

  function forward(net, feats) {
    const acc = accumulate(net, feats);
    return { acc, ...head(net, acc) };
  }

  // --- training (the seed's step 6 and its next step, full back-propagation) ---

  function trainingData(n, seed) {
    const next = rng(seed);
    const data = [];
    for (let k = 0; k < n; k++) {
      const king = Math.floor(next() * N_SQ);
      let silver;
      do { silver = Math.floor(next() * N_SQ); } while (silver === king);
      const dist = Math.abs(Math.floor(king / 5) - Math.floor(silver / 5)) + Math.abs((king % 5) - (silver % 5));
      data.push({ feats: [king * N_SQ + silver], target: (8 - dist) / 8 });
    }
    return data;
  }

  // One epoch of per-sample SGD on ½·error²; returns the epoch's mean squared error.
  // `all` false: W3 and b3 only. `all` true: every layer, by the chain rule through both
  // ReLUs (a unit whose input is <= 0 passes no gradient).
  function epoch(net, data, lr, all) {
    let loss = 0;
    for (const { feats, target } of data) {
      const f = forward(net, feats);
      const err = f.score - target;
      loss += err * err;
      const gh2 = all ? net.W3[0].map((w, j) => (f.h2pre[j] > 0 ? err * w : 0)) : null;
      const gh1 = all
        ? f.acc.map((a, j) => (a > 0 ? gh2.reduce((s, g, i) => s + g * net.W2[i][j], 0) : 0))
        : null;
      for (let j = 0; j < H2; j++) net.W3[0][j] -= lr * err * f.h2[j];
      net.b3[0] -= lr * err;
      if (!all) continue;
      for (let i = 0; i < H2; i++) {
        for (let j = 0; j < H1; j++) net.W2[i][j] -= lr * gh2[i] * f.h1[j];
        net.b2[i] -= lr * gh2[i];
      }
      for (let j = 0; j < H1; j++) {
        for (const k of feats) net.W1[j][k] -= lr * gh1[j];
        net.b1[j] -= lr * gh1[j];
      }
    }
    return loss / data.length;
  }

  return { N_SQ, N_FEAT, H1, H2, EMPTY, KING, SILVER, GLYPH, rng, newNet, cloneNet, paramCount,
    features, accumulate, head, forward, trainingData, epoch };
})();

// --- the page ---
(() => {
  const L = Lab5;
  const $ = (id) => document.getElementById(id);
  const fmt = (v) => v.map((x) => x.toFixed(4)).join(", ");
  let board = new Array(L.N_SQ).fill(L.EMPTY);
  let seed = 1;
  let initial = L.newNet(seed);
  let net = L.cloneNet(initial);
  // The incremental accumulator: h1 before ReLU and the features it was built from.
  let acc = null, accFeats = [];
  let selected = -1;
  const curves = {};

  function rebuildAccumulator() {
    accFeats = L.features(board);
    acc = L.accumulate(net, accFeats);
  }

  function render(change) {
    const cells = $("lab-board").children;
    for (let sq = 0; sq < L.N_SQ; sq++) {
      cells[sq].querySelector(".p").textContent = L.GLYPH[board[sq]];
      cells[sq].classList.toggle("sel", sq === selected);
      cells[sq].dataset.piece = ["empty", "king", "silver"][board[sq]];
    }
    const feats = L.features(board);
    const full = L.forward(net, feats);
    $("lab-features").textContent = board.includes(L.KING)
      ? (feats.length ? "[" + feats.join(", ") + "]" : "[] (no silver)")
      : "[] (place a king: every feature is king × 25 + silver)";
    $("lab-features").dataset.ids = JSON.stringify(feats);
    $("lab-count").textContent = feats.length;
    $("lab-density").textContent = (100 * feats.length / L.N_FEAT).toFixed(2) + "%";
    $("lab-h1").textContent = fmt(full.h1);
    $("lab-h2").textContent = fmt(full.h2);
    $("lab-score").textContent = full.score.toFixed(4);
    $("lab-score").dataset.value = full.score;

    // Incremental: removed columns out, then added columns in (removals first, as the
    // engine does, SPEC §4).
    const removed = accFeats.filter((f) => !feats.includes(f));
    const added = feats.filter((f) => !accFeats.includes(f));
    for (const f of removed) for (let i = 0; i < L.H1; i++) acc[i] -= net.W1[i][f];
    for (const f of added) for (let i = 0; i < L.H1; i++) acc[i] += net.W1[i][f];
    accFeats = feats.slice();
    if (change) {
      $("lab-change").textContent = change;
      $("lab-removed").textContent = "[" + removed.join(", ") + "]";
      $("lab-added").textContent = "[" + added.join(", ") + "]";
      $("lab-removed").dataset.ids = JSON.stringify(removed);
      $("lab-added").dataset.ids = JSON.stringify(added);
    }
    const inc = acc.map((x) => (x > 0 ? x : 0));
    $("lab-h1-inc").textContent = fmt(inc);
    $("lab-h1-full").textContent = fmt(full.h1);
    const diff = Math.max(...inc.map((x, i) => Math.abs(x - full.h1[i])));
    $("lab-agree").textContent = (diff < 1e-12 ? "equal" : "DIFFERENT") + " (largest |difference| " + diff.toExponential(1) + ")";
    $("lab-agree").dataset.diff = diff;
    $("lab-params").textContent = L.paramCount(net).toLocaleString("en") +
      " parameters: 625·16 + 16 + 16·8 + 8 + 8·1 + 1 (W1, b1, W2, b2, W3, b3)";
    $("lab-params").dataset.count = L.paramCount(net);
  }

  function squareName(sq) { return "square " + sq + " (row " + Math.floor(sq / 5) + ", column " + (sq % 5) + ")"; }

  function click(sq) {
    const mode = $("lab-mode-move").checked ? "move" : "place";
    if (mode === "place") {
      selected = -1;
      let p = (board[sq] + 1) % 3;
      // One king: an empty square skips the king while another square holds it.
      if (p === L.KING && board.includes(L.KING)) p = L.SILVER;
      const before = board[sq];
      board[sq] = p;
      render(["empty", "king", "silver"][before] + " → " + ["empty", "king", "silver"][p] + " on " + squareName(sq));
      return;
    }
    if (selected < 0) {
      if (board[sq] !== L.EMPTY) { selected = sq; render(null); }
      return;
    }
    if (board[sq] !== L.EMPTY) { selected = sq === selected ? -1 : sq; render(null); return; }
    const piece = board[selected];
    board[sq] = piece;
    board[selected] = L.EMPTY;
    const what = (piece === L.KING ? "king" : "silver") + " " + selected + " → " + sq;
    selected = -1;
    render(what);
  }

  function setWeights(newNet, why) {
    net = newNet;
    rebuildAccumulator();
    render(why);
  }

  // Loss per epoch, one polyline per training kind, on a shared scale.
  function plot() {
    const series = Object.entries(curves);
    const W = 640, H = 260, pad = 50;
    const all = series.flatMap(([, v]) => v);
    const max = Math.max(...all), n = Math.max(...series.map(([, v]) => v.length));
    const x = (i) => pad + (W - 2 * pad) * (n > 1 ? i / (n - 1) : 0);
    const y = (v) => H - pad + (-(H - 2 * pad) * v) / max;
    const colour = { output: "#c33", all: "#36c" };
    const label = { output: "output layer only", all: "all layers" };
    let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" id="train-svg">`;
    svg += `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="#333"/>`;
    svg += `<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${H - pad}" stroke="#333"/>`;
    svg += `<text x="${W / 2}" y="${H - 10}" text-anchor="middle" font-size="12">epoch</text>`;
    svg += `<text x="8" y="${pad - 10}" font-size="12">mean squared error (max ${max.toFixed(4)})</text>`;
    series.forEach(([k, v], s) => {
      const pts = v.map((l, i) => `${x(i).toFixed(1)},${y(l).toFixed(1)}`).join(" ");
      svg += `<polyline fill="none" stroke="${colour[k]}" stroke-width="2" points="${pts}" data-kind="${k}"/>`;
      svg += `<text x="${pad + 250}" y="${pad - 10 + 16 * s}" fill="${colour[k]}" font-size="12">${label[k]}: ${v[0].toFixed(4)} → ${v[v.length - 1].toFixed(4)}</text>`;
    });
    $("train-plot").innerHTML = svg + "</svg>";
  }

  function train(all) {
    const n = Math.max(10, Math.min(20000, parseInt($("train-n").value, 10) || 1000));
    const epochs = Math.max(1, Math.min(500, parseInt($("train-epochs").value, 10) || 50));
    const lr = parseFloat($(all ? "train-lr-all" : "train-lr").value) || (all ? 0.1 : 0.01);
    const data = L.trainingData(n, seed + 1000);
    const trained = L.cloneNet(initial);
    const losses = [];
    for (let e = 0; e < epochs; e++) losses.push(L.epoch(trained, data, lr, all));
    const kind = all ? "all" : "output";
    curves[kind] = losses;
    $("train-plot").dataset[kind] = JSON.stringify(losses);
    plot();
    $("train-summary").textContent = `${all ? "All layers" : "Output layer"}: ${n} positions, ${epochs} epochs, ` +
      `learning rate ${lr}; loss ${losses[0].toFixed(4)} → ${losses[losses.length - 1].toFixed(4)}. ` +
      "The board above now runs the trained network: put the silver next to the king.";
    setWeights(trained, "weights trained (" + kind + "); accumulator rebuilt");
  }

  function init() {
    const b = $("lab-board");
    for (let sq = 0; sq < L.N_SQ; sq++) {
      const c = document.createElement("div");
      c.className = "cell";
      c.dataset.sq = sq;
      c.innerHTML = `<span class="idx">${sq}</span><span class="p"></span>`;
      c.addEventListener("click", () => click(sq));
      b.appendChild(c);
    }
    $("lab-clear").onclick = () => { board.fill(L.EMPTY); selected = -1; render("board cleared"); };
    $("lab-example").onclick = () => {
      board.fill(L.EMPTY);
      board[20] = L.KING; board[4] = L.SILVER; board[11] = L.SILVER;
      selected = -1;
      render("example: king 20, silvers 4 and 11");
    };
    $("lab-reset").onclick = () => {
      seed = parseInt($("lab-seed").value, 10) || 0;
      initial = L.newNet(seed);
      Object.keys(curves).forEach((k) => delete curves[k]);
      $("train-plot").innerHTML = "";
      setWeights(L.cloneNet(initial), "new random weights, seed " + seed);
    };
    $("train-output").onclick = () => train(false);
    $("train-all").onclick = () => train(true);
    rebuildAccumulator();
    render(null);
  }

  init();
})();
