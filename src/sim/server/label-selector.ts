/**
 * The label selector grammar of apimachinery's labels.Parse, which kube-apiserver applies to
 * `labelSelector` on lists, watches and deletecollection:
 *
 *   selector    := '' | requirement (',' requirement)*
 *   requirement := ['!'] key | key op value | key ('in' | 'notin') '(' values ')'
 *   op          := '=' | '==' | '!=' | '>' | '<'
 *
 * with its particulars: `()` and empty members of a set (`(a,)`, `(,a)`) stand for the empty
 * value; a dangling comma outside a set is an error; keys are qualified names and values label
 * values (63 characters at most); `>`/`<` take one integer. Any error is a 400 BadRequest.
 */
import { badRequest } from './status.js';

export type LabelOp = 'eq' | 'neq' | 'in' | 'notin' | 'exists' | 'notexists' | 'gt' | 'lt';
export interface LabelRequirement { key: string; op: LabelOp; values: string[] }

type Tok = 'id' | 'in' | 'notin' | '!' | '!=' | '=' | '==' | '(' | ')' | ',' | '>' | '<' | 'eos';
interface Token { tok: Tok; lit: string }

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function lex(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (WHITESPACE.has(c)) {
      i++;
      continue;
    }
    if (SPECIAL.has(c)) {
      const two = s.slice(i, i + 2);
      if (two === '!=' || two === '==') {
        out.push({ tok: two, lit: two });
        i += 2;
      } else {
        out.push({ tok: c as Tok, lit: c });
        i++;
      }
      continue;
    }
    let j = i;
    while (j < s.length && !WHITESPACE.has(s[j]) && !SPECIAL.has(s[j])) j++;
    const lit = s.slice(i, j);
    out.push({ tok: lit === 'in' || lit === 'notin' ? lit : 'id', lit });
    i = j;
  }
  out.push({ tok: 'eos', lit: '' });
  return out;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const INTEGER = /^[-+]?\d+$/;

function fail(why: string): never {
  throw badRequest(`unable to parse requirement: ${why}`);
}

function checkKey(key: string): void {
  const parts = key.split('/');
  const name = parts[parts.length - 1];
  const prefixOk = parts.length === 1 || (parts.length === 2 && parts[0].length <= 253 && DNS_SUBDOMAIN.test(parts[0]));
  if (parts.length > 2 || !prefixOk || name.length > 63 || !NAME.test(name)) {
    fail(`key: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'`);
  }
}

function checkValue(key: string, v: string): void {
  if (v.length > 63 || !VALUE.test(v)) fail(`values[0][${key}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`);
}

/** Parses a label selector; throws 400 BadRequest as kube-apiserver answers an invalid one. */
export function parseLabelSelector(sel: string): LabelRequirement[] {
  const toks = lex(sel);
  let at = 0;
  // Where a value may stand, `in` and `notin` are plain identifiers.
  const asValue = (t: Token): Token => (t.tok === 'in' || t.tok === 'notin' ? { tok: 'id', lit: t.lit } : t);
  const peek = () => asValue(toks[at]);
  const nextOperator = () => toks[Math.min(at++, toks.length - 1)];
  const next = () => asValue(nextOperator());

  const values = (): string[] => {
    const open = next();
    if (open.tok !== '(') fail(`found '${open.lit}', expected: '('`);
    const first = peek();
    if (first.tok === ')') {
      next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') fail(`found '${first.lit}', expected: ',', ')' or identifier`);
    const set = new Set<string>();
    for (;;) {
      const t = next();
      if (t.tok === 'id') {
        set.add(t.lit);
        const la = peek();
        if (la.tok === ',') continue;
        if (la.tok === ')') break;
        fail(`found '${la.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        if (set.size === 0) set.add('');
        const la = peek();
        if (la.tok === ')') {
          set.add('');
          break;
        }
        if (la.tok === ',') {
          next();
          set.add('');
        }
      } else {
        fail(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    next(); // the ')'
    return [...set];
  };

  const requirement = (): LabelRequirement => {
    let t = next();
    let negated = false;
    if (t.tok === '!') {
      negated = true;
      t = next();
    }
    if (t.tok !== 'id') fail(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    checkKey(key);
    const la = peek().tok;
    if (negated) return { key, op: 'notexists', values: [] };
    if (la === 'eos' || la === ',') return { key, op: 'exists', values: [] };
    const o = nextOperator();
    let op: LabelOp;
    switch (o.tok) {
      case '=':
      case '==':
        op = 'eq';
        break;
      case '!=':
        op = 'neq';
        break;
      case 'in':
      case 'notin':
        op = o.tok;
        break;
      case '>':
        op = 'gt';
        break;
      case '<':
        op = 'lt';
        break;
      default:
        fail(`found '${o.lit}', expected: '=', '!=', '==', 'in', notin'`);
    }
    let vals: string[];
    if (op === 'in' || op === 'notin') vals = values();
    else {
      const v = peek();
      if (v.tok === 'eos' || v.tok === ',') vals = [''];
      else if (next().tok === 'id') vals = [v.lit];
      else fail(`found '${v.lit}', expected: identifier`);
    }
    if (op === 'gt' || op === 'lt') {
      if (!INTEGER.test(vals[0])) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
    } else {
      for (const v of vals) checkValue(key, v);
    }
    return { key, op, values: vals };
  };

  const reqs: LabelRequirement[] = [];
  for (;;) {
    const t = peek();
    if (t.tok === 'eos') return reqs;
    if (t.tok !== 'id' && t.tok !== '!') fail(`found '${t.lit}', expected: !, identifier, or 'end of string'`);
    reqs.push(requirement());
    const after = next();
    if (after.tok === 'eos') return reqs;
    if (after.tok !== ',') fail(`found '${after.lit}', expected: ',' or 'end of string'`);
    const la = peek();
    if (la.tok !== 'id' && la.tok !== '!') fail(`found '${la.lit}', expected: identifier after ','`);
  }
}

/** True when `labels` satisfy `r`, as labels.Requirement.Matches decides. */
export function labelMatches(labels: Record<string, string> | undefined, r: LabelRequirement): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? (labels as Record<string, string>)[r.key] : undefined;
  switch (r.op) {
    case 'eq':
      return has && v === r.values[0];
    case 'neq':
      return !has || v !== r.values[0];
    case 'in':
      return has && r.values.includes(v as string);
    case 'notin':
      return !has || !r.values.includes(v as string);
    case 'exists':
      return has;
    case 'notexists':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !INTEGER.test(v as string)) return false;
      return r.op === 'gt' ? Number(v) > Number(r.values[0]) : Number(v) < Number(r.values[0]);
    }
  }
}
