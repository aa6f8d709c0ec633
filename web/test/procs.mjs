// procs.mjs — the processes below a process, from Linux's /proc: the bench's
// CPU clock (scripts/bench/browser.mjs) and bigmodel.mjs's memory readings
// both sum over the Chromium processes a Node process started.
import { readdirSync, readFileSync } from "node:fs";

// descendants returns the processes below root (root itself not included),
// each as {pid, stat}: stat is /proc/PID/stat's fields after the command's
// name, so stat[1] is the parent's pid and stat[11], stat[12] the user and
// system time in clock ticks. A process that ends while it is read is left out.
export function descendants(root) {
  const kids = new Map(), stats = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let st;
    try { st = readFileSync(`/proc/${d}/stat`, "utf8"); } catch { continue; }
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    stats.set(+d, f);
    if (!kids.has(+f[1])) kids.set(+f[1], []);
    kids.get(+f[1]).push(+d);
  }
  const out = [];
  const walk = (p) => {
    for (const c of kids.get(p) || []) {
      out.push({ pid: c, stat: stats.get(c) });
      walk(c);
    }
  };
  walk(root);
  return out;
}
