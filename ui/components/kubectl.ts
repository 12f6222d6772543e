/**
 * A kubectl command to copy, shown next to the fact it checks: the dashboard changes nothing, it
 * teaches the raw objects. Copy uses the clipboard API where the page is a secure context, and
 * otherwise selects the text for Ctrl+C.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';

/** Single-quotes `s` for a POSIX shell when it holds anything but safe characters. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9._\/:=@^-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export const kubectl = {
  describePod: (ns: string, name: string) => `kubectl describe pod -n ${shellQuote(ns)} ${shellQuote(name)}`,
  getVolumeAttachment: (name: string) => `kubectl get volumeattachment ${shellQuote(name)} -o yaml`,
  volumesInUse: (node: string) => `kubectl get node ${shellQuote(node)} -o jsonpath='{.status.volumesInUse}'`,
  volumesAttached: (node: string) => `kubectl get node ${shellQuote(node)} -o jsonpath='{.status.volumesAttached}'`,
  describeNode: (node: string) => `kubectl describe node ${shellQuote(node)}`,
  getPv: (pv: string) => `kubectl get pv ${shellQuote(pv)} -o yaml`,
};

export function Kubectl(props: { cmd: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async (e: Event) => {
    const code = (e.currentTarget as HTMLElement).parentElement?.querySelector('code');
    try {
      await navigator.clipboard.writeText(props.cmd);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch {
      if (code) getSelection()?.selectAllChildren(code);
    }
  };
  return html`<span class="kubectl"><code>${props.cmd}</code><button type="button" class="copy" onClick=${copy} aria-label="copy command">${copied ? 'copied' : 'copy'}</button></span>`;
}
