/** The account's API keys, from the dashboard (DECISIONS §10): list, create, reveal, revoke, replace. */
import { ErrorCode } from '../../errors/codes.ts';
import type { KeyStore } from '../../keys/store.ts';
import { type RouteDeclaration, declareRoute } from '../../routes/declare.ts';
import { inputOf } from '../../routes/validate.ts';
import { sessionOf } from '../middleware.ts';
import { SESSION_ERRORS, accountOf, sessionDoc } from '../declare.ts';
import { doneAnswer, keyAnswer, type KeyAnswer, keyNameBody, keysAnswer, type KeysAnswer, revealBody } from '../schemas.ts';
import type { SessionStore } from '../store.ts';
import { replaceActiveKey, revealActiveKey, revokeActiveKey } from './keys.ts';

export interface KeyRouteDeps {
  readonly keys: KeyStore;
  readonly sessions: SessionStore;
}

export const keyRoutes: readonly RouteDeclaration<KeyRouteDeps>[] = [
  declareRoute<KeyRouteDeps>({
    method: 'get',
    path: '/keys',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({ method: 'get', path: '/keys', summary: 'The account\'s keys', status: 200, answer: keysAnswer, errors: SESSION_ERRORS }),
    handler: (s) =>
      async function listKeysRoute(req, res) {
        res.json({ status: 'success', keys: await s.keys.list(accountOf(req)) } satisfies KeysAnswer);
      },
  }),
  declareRoute<KeyRouteDeps>({
    method: 'post',
    path: '/keys',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/keys',
      summary: 'Create a key (the previous one is deactivated)',
      status: 201,
      answer: keyAnswer,
      errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT],
      body: keyNameBody,
    }),
    handler: (s) =>
      async function createKeyRoute(req, res) {
        const { name } = inputOf(req, keyNameBody);
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ status: 'success', key: await s.keys.create(accountOf(req), name) } satisfies KeyAnswer);
      },
  }),
  declareRoute<KeyRouteDeps>({
    method: 'post',
    path: '/keys/reveal',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/keys/reveal',
      summary: 'The active key in plain text (the password again on an old session)',
      status: 200,
      answer: keyAnswer,
      errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT, ErrorCode.REAUTH_REQUIRED],
      body: revealBody,
    }),
    handler: (s) =>
      async function revealKeyRoute(req, res) {
        const key = await revealActiveKey(s, sessionOf(req), inputOf(req, revealBody).password);
        res.setHeader('Cache-Control', 'no-store');
        res.json({ status: 'success', key } satisfies KeyAnswer);
      },
  }),
  declareRoute<KeyRouteDeps>({
    method: 'post',
    path: '/keys/revoke',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({ method: 'post', path: '/keys/revoke', summary: 'Revoke the active key', status: 200, answer: doneAnswer, errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT] }),
    handler: (s) =>
      async function revokeKeyRoute(req, res) {
        await revokeActiveKey(s.keys, accountOf(req));
        res.json({ status: 'success' });
      },
  }),
  declareRoute<KeyRouteDeps>({
    method: 'post',
    path: '/keys/replace',
    visibility: 'session',
    style: 'flat',
    doc: sessionDoc({
      method: 'post',
      path: '/keys/replace',
      summary: 'Replace the active key with a new one of the same name',
      status: 201,
      answer: keyAnswer,
      errors: [...SESSION_ERRORS, ErrorCode.INVALID_INPUT],
    }),
    handler: (s) =>
      async function replaceKeyRoute(req, res) {
        const key = await replaceActiveKey(s.keys, accountOf(req));
        res.setHeader('Cache-Control', 'no-store');
        res.status(201).json({ status: 'success', key } satisfies KeyAnswer);
      },
  }),
];
