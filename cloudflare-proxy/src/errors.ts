// Every error the proxy itself produces, in Anthropic's error shape so @anthropic-ai/sdk surfaces
// `error.type` and `error.message` exactly as it does for the real API.
export type ProxyErrorType =
  | 'proxy_not_configured'
  | 'proxy_upstream_unreachable'
  | 'proxy_internal_error'
  | 'origin_not_allowed'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_too_large'
  | 'invalid_url'
  | 'blocked_address'
  | 'too_many_redirects'
  | 'upstream_timeout'
  | 'upstream_unreachable'
  | 'unsupported_content_type'
  | 'invalid_query'
  | 'search_not_configured'
  | 'search_rejected'
  | 'search_rate_limited'
  | 'upstream_error'
  | 'invalid_request'
  | 'beta_not_allowed'
  | 'device_not_paired'
  | 'device_token_invalid'
  | 'device_token_expired'
  | 'device_revoked'
  | 'device_rate_limited'
  | 'device_daily_limit'
  | 'net_daily_limit'
  | 'device_not_found'
  | 'pairing_code_invalid'
  | 'pairing_locked'
  | 'too_many_failures'
  | 'local_pairing_off'
  | 'owner_not_configured'
  | 'owner_unauthorized';

export interface ProxyErrorBody {
  type: 'error';
  error: { type: ProxyErrorType; message: string };
}

export function errorResponse(
  status: number,
  type: ProxyErrorType,
  message: string,
  headers?: Record<string, string>,
): Response {
  const body: ProxyErrorBody = { type: 'error', error: { type, message } };
  return Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });
}
