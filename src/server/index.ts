/**
 * `memauth/server`: the HTTP API, the OpenAPI document, the MCP server and their building blocks.
 */
export { startServer, buildApp, apiRoutes, VERSION, type StartServerOptions, type RunningServer } from './http.js';
export { resolveConfig, DEFAULT_CONFIG, ENV_VARS, ConfigFileSchema, type ServerConfig } from './config.js';
export { TokenService, tokenHash, TOKEN_PREFIX, type Identity, type TokenInfo, type IssuedToken } from './tokens.js';
export { createMcpServer, mcpPrincipal, MCP_PRINCIPAL_KINDS, type McpBinding } from './mcp.js';
export { buildOpenApi } from './openapi.js';
export { HttpError, SERVER_ERROR_CODES, MEMAUTH_STATUS, errorResponse, type ServerErrorCode, type ErrorBody } from './errors.js';
export { requests, responses, queries } from './schemas.js';
export { computeMetrics, type MetricsReport, type TierMetrics, type Ratio, type MetricsOptions } from '../api/metrics.js';
