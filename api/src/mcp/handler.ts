/**
 * POST /mcp: stateless Streamable HTTP (DECISIONS §9), a fresh server and transport per request.
 * JSON responses (not SSE) so the metering headers set by a tool can still go out with the answer.
 * Each message of a batch is admitted by the limits first (`batch.ts`); the SDK answers the
 * admitted ones, and the refused ones get their limit's error beside those answers.
 */
import type { Request, RequestHandler, Response } from 'express';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpDeps } from './tool-context.ts';
import { type Admission, MAX_BATCH_CALLS, admitCalls, batchTooLarge, refusalAnswer } from './batch.ts';
import { buildMcpServer } from './tools.ts';

/** The request headers the SDK's transport reads; the body is handed over already parsed. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

export function mcpPostHandler(services: McpDeps): RequestHandler {
  return async function mcpPost(req, res) {
    const batch = Array.isArray(req.body);
    const messages: unknown[] = batch ? (req.body as unknown[]) : [req.body];
    if (batch && messages.length > MAX_BATCH_CALLS) {
      res.status(400).json(batchTooLarge(messages.length));
      return;
    }
    const admission = await admitCalls(services, req, res, messages);
    // Nothing may run: the answer is the first limit's own 429, as for any other route.
    const [firstRefusal] = admission.refused;
    if (admission.admitted.length === 0 && firstRefusal) throw firstRefusal.error;
    const answer = await answerAdmitted(services, req, res, batch ? admission.admitted : admission.admitted[0]);
    await send(res, answer, admission);
  };
}

async function answerAdmitted(services: McpDeps, req: Request, res: Response, parsedBody: unknown): Promise<globalThis.Response> {
  const server = buildMcpServer({ services, req, res });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(webRequestOf(req), { parsedBody });
  } finally {
    void transport.close();
    void server.close();
  }
}

function webRequestOf(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  // A fixed origin: the SDK does not read it, and a client's Host header must not be able to make the URL invalid.
  return new Request(new URL(req.originalUrl, 'http://localhost'), { method: 'POST', headers });
}

/** The SDK's answer, with the refused messages' answers added to the batch's. */
async function send(res: Response, answer: globalThis.Response, { refused }: Admission): Promise<void> {
  const refusals = refused.flatMap(({ message, error }) => refusalAnswer(message, error) ?? []);
  for (const { error } of refused) res.set(error.headers);
  if (refusals.length === 0 || (answer.status !== 200 && answer.status !== 202)) {
    answer.headers.forEach((value, name) => {
      if (name !== 'content-length') res.setHeader(name, value);
    });
    res.status(answer.status).send(Buffer.from(await answer.arrayBuffer()));
    return;
  }
  const own: JSONRPCMessage[] = answer.status === 200 ? [(await answer.json()) as JSONRPCMessage | JSONRPCMessage[]].flat() : [];
  res.status(200).json([...own, ...refusals]);
}
