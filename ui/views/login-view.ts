/**
 * The login page, shown when the API answers 401: the token is posted once to /api/v1/session
 * (never put in a URL, never stored by the page) and exchanged for an HttpOnly session cookie.
 */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';

export function LoginView(props: { onLogin: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('token') as HTMLInputElement;
    setBusy(true);
    setError(undefined);
    try {
      await api.login(input.value);
      input.value = '';
      props.onLogin();
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'That token is not the one the controller was started with (--http-token).' : String(err));
    } finally {
      setBusy(false);
    }
  };
  return html`<section class="login">
    <h1>fleet-attach</h1>
    <p>This controller requires its <code>--http-token</code>. It is exchanged for a session cookie that ends after 12 hours or at logout.</p>
    <form data-testid="login" method="post" action="/api/v1/session" onSubmit=${submit}>
      <input type="text" name="username" value="fleet-attach" autocomplete="username" hidden />
      <label>token <input name="token" type="password" autocomplete="current-password" required autofocus /></label>
      <button type="submit" disabled=${busy}>Log in</button>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    </form>
  </section>`;
}
