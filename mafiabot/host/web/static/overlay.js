// The overlay: draws each frame of the table's feed. Every name and word is set as text, never as markup.
"use strict";

(() => {
  const parts = window.location.pathname.split("/");
  const base = parts.slice(0, 4).join("/");
  const layout = parts[3] === "strip" ? "strip" : "circle";
  const CENTRE = [960, 520];
  const ORBIT = [780, 350];
  document.body.dataset.layout = layout;

  let strings = {};
  let frame = null;
  let receivedAt = 0;
  let lastId = null;
  let closed = false;

  const $ = (id) => document.getElementById(id);
  const word = (key, fallback) => (typeof strings[key] === "string" ? strings[key] : fallback);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fill(node, template, values) {
    let text = template;
    for (const [key, value] of Object.entries(values)) text = text.split("{" + key + "}").join(String(value));
    node.textContent = text;
  }

  // Seat centres spaced evenly along the ellipse, seat 1 at the top, clockwise (as on the table card).
  function centres(count) {
    const steps = 3600;
    const points = [];
    for (let i = 0; i <= steps; i += 1) {
      const a = (2 * Math.PI * i) / steps;
      points.push([CENTRE[0] + ORBIT[0] * Math.sin(a), CENTRE[1] - ORBIT[1] * Math.cos(a)]);
    }
    const lengths = [0];
    for (let i = 1; i < points.length; i += 1) {
      const dx = points[i][0] - points[i - 1][0];
      const dy = points[i][1] - points[i - 1][1];
      lengths.push(lengths[i - 1] + Math.hypot(dx, dy));
    }
    const total = lengths[lengths.length - 1];
    const out = [];
    for (let s = 0; s < count; s += 1) {
      const want = (total * s) / count;
      let i = 0;
      while (i < lengths.length - 1 && lengths[i] < want) i += 1;
      out.push(points[i]);
    }
    return out;
  }

  function secondsLeft() {
    if (!frame || frame.left === null || frame.left === undefined) return null;
    if (frame.paused) return Math.ceil(frame.left);
    return Math.max(0, Math.ceil(frame.left - (performance.now() - receivedAt) / 1000));
  }

  function nameOf(seat) {
    const row = frame.seats.find((s) => s.seat === seat);
    return row ? row.name : "";
  }

  function seatNode(row, at) {
    const node = el("div", "seat");
    node.dataset.seat = String(row.seat);
    node.dataset.alive = String(row.alive);
    node.dataset.nominee = String(row.nominee);
    node.dataset.floor = String(frame.floor === row.seat);
    node.style.left = Math.round(at[0]) + "px";
    node.style.top = Math.round(at[1]) + "px";
    node.appendChild(el("div", "disc", row.seat));
    node.appendChild(el("span", "name", row.name));
    if (row.role) {
      const role = el("span", "role", row.role.name);
      role.dataset.role = row.role.id;
      role.dataset.team = row.role.team;
      node.appendChild(role);
    }
    if (row.left) node.appendChild(el("span", "left", row.left.text));
    const fouls = el("div", "fouls");
    for (let i = 0; i < 4; i += 1) {
      const mark = el("span", "foul");
      mark.dataset.on = String(i < row.fouls);
      fouls.appendChild(mark);
    }
    node.appendChild(fouls);
    if (frame.floor === row.seat) node.appendChild(el("span", "countdown", ""));
    return node;
  }

  function phaseText() {
    const when = frame.is_night
      ? word("stream.night", "Night {night}").split("{night}").join(String(frame.night))
      : word("stream.day", "Day {day}").split("{day}").join(String(frame.day));
    const paused = frame.paused ? " · " + word("stream.paused", "paused") : "";
    return when + " · " + frame.phase_text + paused;
  }

  function ballotText() {
    if (!frame.nominees.length) return "";
    return word("stream.nominees", "On the ballot") + ": " + frame.nominees.map((s) => "#" + s).join(", ");
  }

  function votePanel(panel) {
    panel.replaceChildren();
    const vote = frame.vote;
    panel.hidden = !vote;
    if (!vote) return;
    panel.appendChild(el("span", "tally", vote.lift ? word("stream.lift", "Shall they all leave?") : word("stream.vote", "Vote")));
    for (const seat of vote.candidates) {
      const hands = vote.hands.filter((h) => (vote.lift ? h[1] === 1 : h[1] === seat)).map((h) => "#" + h[0]);
      const line = el("span", "tally", "#" + seat + " " + nameOf(seat) + ": " + hands.length + (hands.length ? " (" + hands.join(", ") + ")" : ""));
      line.dataset.candidate = String(seat);
      line.dataset.current = String(vote.current === seat);
      panel.appendChild(line);
      if (vote.lift) break;
    }
  }

  // The night's record (broadcast and judge tiers only: the public tier's frames hold none).
  function nightPanel(panel) {
    panel.replaceChildren();
    const night = frame.nights && frame.nights.length ? frame.nights[frame.nights.length - 1] : null;
    panel.hidden = !night;
    if (!night) return;
    panel.appendChild(el("span", "record", word("stream.night", "Night {night}").split("{night}").join(String(night.night))));
    const pairs = (list) => list.map((p) => "#" + p[0] + " → #" + p[1]).join(", ");
    if (night.shots.length) panel.appendChild(el("span", "record", word("stream.shots", "Shots") + ": " + pairs(night.shots)));
    for (const check of night.checks) {
      const by = frame.seats.find((s) => s.seat === check.seat);
      const who = by && by.role ? by.role.name : "";
      const line = el("span", "record", word("stream.checks", "Checks") + ": " + who + " #" + check.seat + " → #" + check.target + (check.found ? " ✓" : " ✗"));
      line.dataset.found = String(check.found);
      panel.appendChild(line);
    }
    if (night.heals.length) panel.appendChild(el("span", "record", word("stream.saves", "Saves") + ": " + pairs(night.heals)));
    if (night.best_move) {
      const move = night.best_move;
      panel.appendChild(el("span", "record", word("stream.best_move", "Best move") + ": #" + move.seat + " → " + move.targets.map((t) => "#" + t).join(", ") + " (" + move.black + ")"));
    }
  }

  function draw() {
    document.body.dataset.state = closed ? "closed" : frame ? "live" : "waiting";
    $("notice").textContent = closed ? word("stream.closed", "") : frame ? "" : word("stream.waiting", "");
    const seats = $("seats");
    if (!frame || closed) {
      seats.replaceChildren();
      return;
    }
    document.documentElement.lang = frame.language;
    document.body.dataset.phase = frame.phase;
    const places = centres(frame.seats.length);
    seats.replaceChildren(...frame.seats.map((row, i) => seatNode(row, places[i])));
    $("phase").textContent = phaseText();
    $("strip-phase").textContent = phaseText();
    $("ballot").textContent = ballotText();
    $("strip-ballot").textContent = ballotText();
    votePanel($("vote"));
    votePanel($("strip-vote"));
    nightPanel($("nights"));
    const result = $("result");
    result.hidden = !frame.result;
    result.textContent = frame.result ? frame.result.text : "";
    tick();
  }

  function tick() {
    if (!frame || closed) return;
    const left = secondsLeft();
    const shown = left === null ? "" : String(left);
    for (const node of document.querySelectorAll(".countdown")) node.textContent = shown;
    const floor = $("strip-floor");
    if (frame.floor) {
      fill(floor, word("stream.floor", "#{seat} {name}"), { seat: frame.floor, name: nameOf(frame.floor) });
      floor.textContent += shown ? " · " + shown : "";
    } else {
      floor.textContent = "";
    }
  }

  function connect() {
    const address = base + "/events" + (lastId !== null ? "?last=" + encodeURIComponent(lastId) : "");
    const source = new EventSource(address);
    source.onmessage = (event) => {
      const data = JSON.parse(event.data);
      lastId = event.lastEventId;
      frame = data.frame;
      receivedAt = performance.now() - data.age * 1000;
      draw();
    };
    source.addEventListener("closed", () => {
      closed = true;
      source.close();
      draw();
    });
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED || closed) return;
      // The browser gave up on the stream: a link that no longer opens stops here; otherwise the
      // bot may be restarting or the link's viewers full, so try again.
      fetch(base + "/strings.json", { cache: "no-store" })
        .then((r) => {
          if (r.status === 404 || r.status === 410) {
            closed = true;
            draw();
          } else {
            window.setTimeout(connect, 3000);
          }
        })
        .catch(() => window.setTimeout(connect, 3000));
    };
  }

  fetch(base + "/strings.json", { cache: "no-store" })
    .then((r) => (r.ok ? r.json() : {}))
    .then((s) => { strings = s; draw(); })
    .catch(() => {});
  window.setInterval(tick, 250);
  connect();
})();
