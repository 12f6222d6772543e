/**
 * The rule codes the sources cite (`(F8)`, `F2-F8`, `G1-G4, H1`, `§2`, `§O`) all resolve in
 * docs/upstream-rules.md, and every `docs/*.md` path they name exists.
 *
 * What counts as a citation: the text of comments and string literals (log lines and API
 * descriptions cite rules too), never identifiers or other code, read with the TypeScript parser.
 * In that text a code is one of the catalogue's section letters (§A … §R) followed by one or two
 * digits, as a whole word: `V8`, `ES2022`, `0xA1`, `K8s` and `HTTP/2` are not codes. `F2-F8`
 * (hyphen or en dash, the letter repeated or not) stands for F2 … F8. A section reference is `§`
 * and a number or letter; one qualified by another document (`ecosystem.md §1.4`) is not ours.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CATALOGUE = 'docs/upstream-rules.md';
/** The controller's sources: the TypeScript and the AssemblyScript plan kernel. */
const SOURCE_DIRS = ['src', 'assembly'];

interface Catalogue {
  /** Rule codes defined by a `- **F8** …` line. */
  readonly codes: ReadonlySet<string>;
  /** Section names of the `## §2 …` / `### §F …` headings: '0', '1', '2', '3', 'A' … 'R'. */
  readonly sections: ReadonlySet<string>;
  /** Codes defined more than once. */
  readonly duplicates: readonly string[];
}

function readCatalogue(text: string): Catalogue {
  const codes = new Set<string>();
  const duplicates: string[] = [];
  for (const m of text.matchAll(/^\s*[-*]\s+\*\*([A-Z]\d{1,2})\*\*/gm)) {
    if (codes.has(m[1])) duplicates.push(m[1]);
    codes.add(m[1]);
  }
  const sections = new Set<string>();
  for (const m of text.matchAll(/^#{2,4}\s+§(\S+)/gm)) sections.add(m[1]);
  return { codes, sections, duplicates };
}

/** One citation: what it cites, and where it starts in the text it was found in. */
interface Cited {
  readonly value: string;
  readonly index: number;
}

interface Citations {
  readonly codes: Cited[];
  readonly sections: Cited[];
  readonly docs: Cited[];
}

/**
 * The citations in one piece of comment or string text. `letters` are the catalogue's section
 * letters (a code is one of them plus digits).
 */
function citationsIn(text: string, letters: ReadonlySet<string>): Citations {
  const codes: Cited[] = [];
  for (const m of text.matchAll(/\b([A-Z])(\d{1,2})(?:\s?[-–]\s?\1?(\d{1,2}))?\b/g)) {
    const [, letter, from, to] = m;
    if (!letters.has(letter)) continue;
    const last = to === undefined ? Number(from) : Number(to);
    for (let n = Number(from); n <= last; n++) codes.push({ value: `${letter}${n}`, index: m.index });
  }
  const sections: Cited[] = [];
  for (const m of text.matchAll(/(?:([\w./-]+\.md)\s+)?§\s?(\d+(?:\.\d+)*|[A-Z])\b/g)) {
    const [, document, section] = m;
    if (document === undefined || document.endsWith('upstream-rules.md')) sections.push({ value: section, index: m.index });
  }
  const docs = [...text.matchAll(/\bdocs\/[\w./-]*?\.md\b/g)].map((m) => ({ value: m[0], index: m.index }));
  return { codes, sections, docs };
}

/** Every comment and string literal of a TypeScript file, with its line number. */
function commentsAndStrings(fileName: string, text: string): Array<{ line: number; text: string }> {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: Array<{ line: number; text: string }> = [];
  const seen = new Set<number>();
  const add = (pos: number, s: string) => out.push({ line: sf.getLineAndCharacterOfPosition(pos).line + 1, text: s });
  const comments = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      add(r.pos, text.slice(r.pos, r.end));
    }
  };
  // Every comment is trivia before some token (the end-of-file token included), so walking the
  // tokens, not only the nodes, finds the comments before a closing brace too.
  const visit = (node: ts.Node) => {
    comments(ts.getLeadingCommentRanges(text, node.pos));
    comments(ts.getTrailingCommentRanges(text, node.end));
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) {
      add(node.getStart(sf), node.text);
    }
    for (const child of node.getChildren(sf)) visit(child);
  };
  visit(sf);
  return out;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Where each cited code, section and docs path occurs (`src/x.ts:12`). */
function citedInSources(letters: ReadonlySet<string>): Record<keyof Citations, Map<string, string[]>> {
  const found = { codes: new Map<string, string[]>(), sections: new Map<string, string[]>(), docs: new Map<string, string[]>() };
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const piece of commentsAndStrings(file, text)) {
      const c = citationsIn(piece.text, letters);
      for (const key of ['codes', 'sections', 'docs'] as const) {
        for (const { value, index } of c[key]) {
          const line = piece.line + (piece.text.slice(0, index).match(/\n/g)?.length ?? 0);
          const at = found[key].get(value) ?? [];
          at.push(`${file}:${line}`);
          found[key].set(value, at);
        }
      }
    }
  }
  return found;
}

const catalogue = readCatalogue(readFileSync(join(ROOT, CATALOGUE), 'utf8'));
const LETTERS = new Set([...catalogue.sections].filter((s) => /^[A-Z]$/.test(s)));
const cited = citedInSources(LETTERS);

function missing(map: Map<string, string[]>, defined: (value: string) => boolean): string[] {
  return [...map].filter(([value]) => !defined(value)).map(([value, at]) => `${value} (${at.slice(0, 3).join(', ')}${at.length > 3 ? ', …' : ''})`);
}

test('citations are read exactly: ranges expand, look-alikes and other documents are left out', () => {
  const letters = new Set('ABCDEFGHIJKLMNOPQR');
  const c = citationsIn(
    '(F8) F2-F8, G1–G4, H1, I3; rule C9; C10; A1–3; D7–E1 §2 §O docs/upstream-rules.md §P. '
      + 'V8 ES2022 0xA1 K8s HTTP/2 Z0 ecosystem.md §1.4 see docs/deviations.md',
    letters,
  );
  assert.deepEqual(c.codes.map((x) => x.value), ['F8', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8', 'G1', 'G2', 'G3', 'G4', 'H1', 'I3', 'C9', 'C10', 'A1', 'A2', 'A3', 'D7', 'E1']);
  assert.deepEqual(c.sections.map((x) => x.value), ['2', 'O', 'P']);
  assert.deepEqual(c.docs.map((x) => x.value), ['docs/upstream-rules.md', 'docs/deviations.md']);
});

test('comments and string literals are read, code is not', () => {
  const pieces = commentsAndStrings('x.ts', [
    '/** F1 */',
    'const F2 = 1; // F3',
    "log.info('F4 pass', `F5 ${F2} F6`);",
    'function f() {',
    '  return 0;',
    '  // F7 before the closing brace',
    '}',
    '/* F8 at the end */',
  ].join('\n'));
  const codes = pieces.flatMap((p) => citationsIn(p.text, new Set('F')).codes.map((x) => x.value)).sort();
  assert.deepEqual(codes, ['F1', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8']);
});

test(`the catalogue (${CATALOGUE}) defines each code once, under a section of its letter`, () => {
  assert.deepEqual(catalogue.duplicates, []);
  assert.ok(catalogue.codes.size >= 80, `only ${catalogue.codes.size} codes defined`);
  const orphans = [...catalogue.codes].filter((code) => !LETTERS.has(code[0]));
  assert.deepEqual(orphans, [], 'codes whose letter has no "### §<letter>" heading');
});

test(`every rule code cited in ${SOURCE_DIRS.join('/ and ')}/ is defined in ${CATALOGUE}`, () => {
  assert.ok(cited.codes.size >= 50, `only ${cited.codes.size} codes found: is the extraction broken?`);
  assert.deepEqual(
    missing(cited.codes, (code) => catalogue.codes.has(code)),
    [],
    `cited but not defined in ${CATALOGUE} (define it there; if it is not a rule, write it so it does not read as one, e.g. p99, HTTP/2)`,
  );
});

test(`every § section cited in the sources is a heading of ${CATALOGUE}`, () => {
  assert.ok(cited.sections.size > 0);
  assert.deepEqual(missing(cited.sections, (s) => catalogue.sections.has(s)), []);
});

test('every docs/*.md path named in the sources exists', () => {
  assert.ok(cited.docs.has(CATALOGUE));
  assert.deepEqual(missing(cited.docs, (path) => existsSync(join(ROOT, path))), []);
});

test('docs/deviations.md cites only defined codes and sections', () => {
  const text = readFileSync(join(ROOT, 'docs/deviations.md'), 'utf8');
  const c = citationsIn(text, LETTERS);
  assert.ok(c.codes.length > 0);
  assert.deepEqual(c.codes.map((x) => x.value).filter((code) => !catalogue.codes.has(code)), []);
  assert.deepEqual(c.sections.map((x) => x.value).filter((s) => !catalogue.sections.has(s)), []);
});
