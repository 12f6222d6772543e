/** The Prometheus text format (0.0.4) read back, for tests that scrape `/metrics`. */
import assert from 'node:assert/strict';

export interface Sample { name: string; labels: Record<string, string>; value: number }

/** Parses the Prometheus text format (0.0.4): `name{k="v",...} value`, with \\ \" \n escapes. */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$/.exec(line);
    assert.ok(m, `unparsable line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
      let consumed = 0;
      for (let l = re.exec(m[2].slice(1, -1)); l; l = re.exec(m[2].slice(1, -1))) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
        consumed = re.lastIndex;
      }
      assert.equal(consumed, m[2].length - 2, `bad labels: ${line}`);
    }
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

export function find(samples: Sample[], name: string, labels: Record<string, string>): Sample | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
