// The public API as the console calls it: every call goes to /v1 with the
// signed-in credential as a bearer token; the credential lives in
// sessionStorage only (never in a URL, a cookie or the page's HTML).
import { enc, say, showErrors } from "./dom.js";

export const store = window.sessionStorage;
export const KEY = "matchplane.credential";
export const PROJECT = "matchplane.project";
export const OPERATOR = "matchplane.operator";

/** An error answer of the API (problem+json): `status`, `body` (with `code`, `errors`). */
export class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || "HTTP " + status);
    this.status = status;
    this.body = body && typeof body === "object" ? body : {};
  }
}
let refused = () => {};
/** What to do when the stored credential is refused (401): set by the router. */
export function onRefused(fn) { refused = fn; }
/**
 * Calls the public API with the signed-in credential (or `credential`), and
 * `extra` headers (e.g. `If-Match`); throws Problem on an error answer.
 */
export async function api(method, path, body, credential, extra) {
  const headers = Object.assign({ Authorization: "Bearer " + (credential || store.getItem(KEY) || "") }, extra || {});
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
  const text = await response.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch (_) { data = text; } }
  if (!response.ok) {
    if (response.status === 401 && !credential) refused("Signed out: the credential was refused.");
    throw new Problem(response.status, data);
  }
  return data;
}
export const project = () => store.getItem(PROJECT);
export const isOperator = () => store.getItem(OPERATOR) === "1";
/** A path under the signed-in project. */
export const P = (rest) => "/v1/projects/" + enc(project()) + rest;
/** A path under game mode `name` of the signed-in project. */
export const M = (name, rest) => P("/game-modes/" + enc(name) + (rest || ""));

/** A problem's words: its detail and code. */
const problemText = (error) => error.message + (error.body.code ? " (" + error.body.code + ")" : "");
/** Tells the user what failed. */
export function failure(error) {
  say(error instanceof Problem ? problemText(error) : String(error), true);
}
/**
 * Shows why a form's request failed, the one way every form does: a
 * problem's field errors beside their fields (`map` rewrites each first),
 * and a problem not about a field (its `errors` is `[]`, e.g. 404
 * NOT_FOUND for a project deleted meanwhile) as its detail and code, beside
 * "other settings" or in the form's summary. Anything else (the network)
 * goes to `failure`.
 */
export function formFailure(form, summary, error, map) {
  if (!(error instanceof Problem)) return failure(error);
  const errors = Array.isArray(error.body.errors) ? error.body.errors : [];
  if (errors.length) return showErrors(form, summary, map ? errors.map(map) : errors);
  showErrors(form, summary, [{ field: "$other", message: problemText(error) }]);
}
