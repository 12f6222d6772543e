/**
 * A state or side shown as icon plus text, never by colour alone; the colour class only repeats
 * what the words say.
 */
import { html } from 'htm/preact';

const ICONS: Record<string, [string, string]> = {
  attached: ['●', 'ok'],
  attaching: ['↻', 'busy'],
  detaching: ['↻', 'busy'],
  uncertain: ['?', 'warn'],
  detached: ['○', 'muted'],
  pending: ['↻', 'busy'],
  running: ['↻', 'busy'],
  backoff: ['‖', 'warn'],
  attach: ['⇢', 'busy'],
  detach: ['⇠', 'busy'],
  healthy: ['✓', 'ok'],
  ready: ['✓', 'ok'],
  'not ready': ['✗', 'bad'],
  unhealthy: ['✗', 'bad'],
  'out of service': ['⛔', 'bad'],
  'out-of-service': ['⛔', 'bad'],
  settled: ['✓', 'ok'],
  mounted: ['▣', 'warn'],
  'not-mounted': ['□', 'ok'],
  live: ['●', 'ok'],
  stale: ['⚠', 'bad'],
};

export function StateLabel(props: { state: string; text?: string }) {
  const [icon, tone] = ICONS[props.state] ?? ['•', 'muted'];
  return html`<span class=${`state ${tone}`}><span aria-hidden="true" class="icon">${icon}</span> ${props.text ?? props.state}</span>`;
}

/** A reason code as a chip: the code's text, with a warning icon for the detach side. */
export function ReasonChip(props: { reason: string; side?: string; title?: string }) {
  const icon = props.side === 'detach' ? '⇠' : '⇢';
  return html`<span class="reason" title=${props.title ?? props.reason}><span aria-hidden="true">${icon}</span> ${props.reason}</span>`;
}
