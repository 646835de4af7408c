// memauth dashboard: a small hash-routed page over the /v1 API. No framework, no build step.
// This file: sign-in, who is signed in, and the router; each page lives in its own module.
import { api, session } from './api.js';
import { auditPage } from './audit.js';
import { decisionPage, decisionsPage } from './decisions.js';
import { errorBox, main, page } from './layout.js';
import { memoriesPage, recordPage } from './memories.js';
import { metricsPage } from './metrics.js';
import { reviewPage } from './review.js';
import { surfacesPage } from './surfaces.js';
import { h } from './ui.js';

// ------------------------------------------------------------------ sign in

function renderWho() {
  const who = document.getElementById('who');
  const nav = document.getElementById('nav');
  if (!session.who) {
    who.replaceChildren();
    nav.hidden = true;
    return;
  }
  nav.hidden = false;
  const w = session.who;
  const label = w.admin ? ['admin', ' · tenant ', h('strong', session.tenant ?? '?')] : [h('strong', w.principal.id), ` (${w.principal.kind}) · tenant `, h('strong', w.tenant)];
  who.replaceChildren(
    h('span', 'Signed in as ', label),
    ' ',
    h('button.link', { type: 'button', on: { click: () => { session.clear(); location.hash = '#/'; route(); } } }, 'Sign out'),
  );
}

function signInPage(problem) {
  const token = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', 'aria-describedby': 'token-help' });
  const tenant = h('input', { id: 'tenant', name: 'tenant', type: 'text', autocomplete: 'off', 'aria-describedby': 'tenant-help' });
  const out = h('div', { 'aria-live': 'polite' });
  if (problem) out.append(errorBox(problem));
  const form = h(
    'form.card',
    {
      on: {
        submit: async (ev) => {
          ev.preventDefault();
          out.replaceChildren(h('p', 'Checking the token…'));
          try {
            const who = await api.whoami(token.value.trim());
            if (who.admin && !tenant.value.trim()) {
              out.replaceChildren(h('p.msg.msg-error', { role: 'alert' }, 'This is the admin token: name the tenant to look at.'));
              tenant.focus();
              return;
            }
            session.save(token.value.trim(), who.admin ? tenant.value.trim() : who.tenant);
            session.who = who;
            renderWho();
            location.hash = '#/memories';
            route();
          } catch (e) {
            out.replaceChildren(errorBox(e));
          }
        },
      },
    },
    h('p', h('label', { for: 'token' }, 'Bearer token')),
    token,
    h('p.help', { id: 'token-help' }, 'Paste an admin token or a principal token (mat_…). It is kept in this tab only (sessionStorage) and sent as a bearer header to this server.'),
    h('p', h('label', { for: 'tenant' }, 'Tenant (admin token only)')),
    tenant,
    h('p.help', { id: 'tenant-help' }, 'A principal token fixes its tenant; the admin token must name one.'),
    h('p', h('button', { type: 'submit' }, 'Sign in')),
    out,
  );
  page('Sign in', form);
}

// ------------------------------------------------------------------ router

async function route() {
  if (!session.token) {
    renderWho();
    signInPage();
    return;
  }
  if (!session.who) {
    try {
      session.who = await api.whoami();
    } catch (e) {
      session.clear();
      renderWho();
      signInPage(e);
      return;
    }
    renderWho();
  }
  const [, name, arg] = location.hash.match(/^#\/([a-z]+)(?:\/(.+))?$/) ?? [];
  const id = arg ? decodeURIComponent(arg) : null;
  try {
    if (name === 'memory' && id) await recordPage(id);
    else if (name === 'decisions') await decisionsPage();
    else if (name === 'decision' && id) await decisionPage(id);
    else if (name === 'review') await reviewPage();
    else if (name === 'metrics') await metricsPage();
    else if (name === 'surfaces') await surfacesPage();
    else if (name === 'audit') auditPage();
    else await memoriesPage();
  } catch (e) {
    main().append(errorBox(e));
  }
}

window.addEventListener('hashchange', route);
route();
