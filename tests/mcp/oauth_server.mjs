// Real OAuth authorization servers for the protected-resource tests: panva's oidc-provider
// (installed by .ci/mcp-setup.sh), one per entry of the JSON configuration file given as the
// first argument (the second is the node_modules folder holding oidc-provider). Each issues access tokens by client credentials, bound to a resource by RFC 8707
// resource indicators: JWTs (signed with the keys the test gave, so the test can also forge
// tokens with the same keys) or opaque tokens for introspection. Prints "ready ISSUER" per server.
//
// Configuration: {"servers": [{"issuer", "port", "jwks": {"keys": [...]}, "clients": [...],
//   "resources": {"URL": {"scope", "format": "jwt" | "opaque", "alg", "ttl"}}}]}
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const entry = pathToFileURL(join(process.argv[3], 'oidc-provider', 'lib', 'index.js'));
const { default: Provider, errors } = await import(entry.href);

for (const server of config.servers) {
  const resources = server.resources;
  const scopes = new Set(['openid']);
  for (const info of Object.values(resources)) {
    for (const scope of info.scope.split(' ')) scopes.add(scope);
  }
  const provider = new Provider(server.issuer, {
    clients: server.clients,
    jwks: server.jwks,
    scopes: [...scopes],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Only confidential clients (the resource server) may introspect.
        allowedPolicy: async (ctx, client) => client.clientAuthMethod !== 'none',
      },
      revocation: {
        enabled: true,
        allowedPolicy: async (ctx, client, token) => token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, indicator) => {
          const info = resources[indicator];
          if (!info) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          return {
            scope: info.scope,
            audience: indicator,
            accessTokenTTL: info.ttl ?? 300,
            accessTokenFormat: info.format ?? 'jwt',
            ...(info.format === 'opaque' ? {} : { jwt: { sign: { alg: info.alg ?? 'ES256' } } }),
          };
        },
      },
    },
  });
  // A token request for a client the test deleted, and the like, must not print stack traces.
  provider.on('server_error', (ctx, error) => console.error('server_error', error));
  await new Promise((resolve) => provider.listen(server.port, '127.0.0.1', resolve));
  console.log(`ready ${server.issuer}`);
}
