// A real OpenID Connect provider (oidc-provider, a certified implementation)
// for the interop tests, which start it through internal/oidctest. It plays
// the part Keycloak plays for AI Hub: users log in through the
// authorization-code flow, a client asks for offline_access and gets an
// offline (refresh) token, and the refresh_token grant turns that into a
// JWT access token for the scorehub resource, carrying
// Keycloak-shaped claims (preferred_username, realm_access.roles, groups).
//
// Usage: node server.mjs [port]
//
// It listens on 127.0.0.1 (port 0, the default, picks a free one) and prints
// one JSON line to stdout once it serves: {"issuer": "http://127.0.0.1:PORT",
// "clientId": ..., "redirectUri": ..., "resource": ..., "audience": ...}.
// It exits when its standard input closes, so it never outlives the test
// that started it.
//
// Login is scripted rather than a page: the interaction routes below take a
// form POST, check the password and finish the interaction through the
// provider's own API, exactly as a real login page would.
//
//   GET  /interaction/:uid          -> {"uid": ..., "prompt": "login" | "consent"}
//   POST /interaction/:uid/login    form: login, password
//   POST /interaction/:uid/consent  grants what the client asked for

import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const CLIENT_ID = 'scorehub-cli';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const RESOURCE = 'urn:scorehub:api';
const AUDIENCE = 'scorehub';
const RESOURCE_SCOPE = 'scorehub';

// The realm's users, shaped the way Keycloak reports them.
const ACCOUNTS = {
  alice: { password: 'alice-password', roles: ['admin', 'offline_access'], groups: ['/analysts', '/scoring'] },
  bob: { password: 'bob-password', roles: ['user', 'offline_access'], groups: ['/analysts'] },
};

function signingKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };
}

function readForm(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > 16 * 1024) {
        reject(new Error('form too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

function sendJSON(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

async function interaction(provider, req, res, rest) {
  const details = await provider.interactionDetails(req, res);
  const [uid, action] = rest;
  if (uid !== details.uid) {
    sendJSON(res, 400, { error: 'interaction uid mismatch' });
    return;
  }
  if (req.method === 'GET' && action === undefined) {
    sendJSON(res, 200, { uid: details.uid, prompt: details.prompt.name });
    return;
  }
  if (req.method === 'POST' && action === 'login') {
    const form = await readForm(req);
    const login = form.get('login') ?? '';
    const account = Object.hasOwn(ACCOUNTS, login) ? ACCOUNTS[login] : undefined;
    if (details.prompt.name !== 'login' || !account || account.password !== form.get('password')) {
      sendJSON(res, 401, { error: 'invalid login' });
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return;
  }
  if (req.method === 'POST' && action === 'consent') {
    if (details.prompt.name !== 'consent') {
      sendJSON(res, 400, { error: `prompt is ${details.prompt.name}` });
      return;
    }
    const { prompt: { details: missing }, params, session, grantId } = details;
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    if (missing.missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    const id = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId: id } }, { mergeWithLastSubmission: true });
    return;
  }
  sendJSON(res, 404, { error: 'no such interaction route' });
}

function configuration() {
  return {
    clients: [{
      client_id: CLIENT_ID,
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }],
    jwks: { keys: [signingKey()] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access', RESOURCE_SCOPE],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo(ctx, indicator) {
          if (indicator !== RESOURCE) throw new errors.InvalidTarget();
          return {
            scope: RESOURCE_SCOPE,
            audience: AUDIENCE,
            accessTokenTTL: 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    async findAccount(ctx, sub) {
      if (!Object.hasOwn(ACCOUNTS, sub)) return undefined;
      return { accountId: sub, claims: () => ({ sub, preferred_username: sub }) };
    },
    extraTokenClaims(ctx, token) {
      if (token.kind !== 'AccessToken' || !Object.hasOwn(ACCOUNTS, token.accountId)) return undefined;
      const account = ACCOUNTS[token.accountId];
      return {
        preferred_username: token.accountId,
        realm_access: { roles: account.roles },
        groups: account.groups,
      };
    },
  };
}

const portArg = process.argv[2] ?? '0';
if (!/^\d+$/.test(portArg)) {
  console.error(`usage: node server.mjs [port]; got ${portArg}`);
  process.exit(2);
}

let callback;
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://127.0.0.1').pathname;
  const parts = path.split('/').filter(Boolean);
  if (parts[0] === 'interaction') {
    interaction(provider, req, res, parts.slice(1)).catch((err) => {
      if (!res.headersSent) sendJSON(res, 400, { error: err.message });
      else res.destroy();
    });
    return;
  }
  callback(req, res);
});

let provider;
server.listen(Number(portArg), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  provider = new Provider(issuer, configuration());
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  callback = provider.callback();
  process.stdout.write(`${JSON.stringify({
    issuer, clientId: CLIENT_ID, redirectUri: REDIRECT_URI, resource: RESOURCE, audience: AUDIENCE,
  })}\n`);
});

// Die with the parent: its end of the pipe closes when it exits, however it exits.
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
