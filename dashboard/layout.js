// The page frame every view draws into: the title, focus and current-page mark, and the error box.
import { ApiError } from './api.js';
import { h } from './ui.js';

export const main = () => document.getElementById('main');

export function page(title, ...content) {
  document.title = `${title} — memauth`;
  const heading = h('h1', { tabindex: '-1' }, title);
  main().replaceChildren(heading, ...content.filter((c) => c !== null && c !== undefined));
  heading.focus();
  for (const a of document.querySelectorAll('#nav a')) {
    const here = location.hash.startsWith(a.getAttribute('href').replace(/s$/, ''));
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

export function errorBox(e) {
  const msg = e instanceof ApiError ? e.message : `Error: ${e && e.message ? e.message : String(e)}`;
  return h('p.msg.msg-error', { role: 'alert' }, msg);
}
