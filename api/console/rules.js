// A game mode's attributes and rules (docs/rules.md) as fields: one row per
// attribute and per rule, each with its own relax steps, add and remove
// buttons, and the same document as JSON on demand (both views read and
// write the one document, so either round-trips it). Every control names
// its path in the mode's JSON (data-field, e.g. `rules[0].attribute` or
// `attributes.maps.values`), so a 422's errors[].field is shown beside it.
import { el, field, fill, input, select } from "./dom.js";

const ATTRIBUTE_TYPES = ["string", "number", "stringSet", "playerSet"];
const RULE_TYPES = ["equal", "intersect", "distance", "avoid"];
/** The party options of each type that has them; "" leaves `party` out (the server's default). */
const PARTY = {
  number: [["", "default (mean)"], "mean", "min", "max"],
  stringSet: [["", "default (intersection)"], "intersection", "union"],
};
/** Which optional fields each attribute type has. */
const ATTRIBUTE_FIELDS = {
  string: ["values", "default"],
  number: ["min", "max", "default", "party"],
  stringSet: ["values", "default", "party"],
  playerSet: ["default"],
};

/** An error of the fields, before anything is sent. */
export class FieldErrors extends Error {
  constructor(errors) {
    super(errors.map((e) => e.field + ": " + e.message).join("; "));
    this.errors = errors;
  }
}

const isObject = (v) => !!v && typeof v === "object" && !Array.isArray(v);
const blank = (v) => v === undefined || v === null;
/** A number's text: "" when absent. */
const numberText = (v) => (blank(v) ? "" : typeof v === "number" ? String(v) : JSON.stringify(v));
/** A list's text: entries comma separated, or the JSON array when an entry would not survive that. */
function listText(v) {
  if (blank(v)) return "";
  if (!Array.isArray(v)) return JSON.stringify(v);
  if (!v.length) return "[]";
  const plain = v.every((s) => typeof s === "string" && s.trim() === s && s !== "" && !s.includes(",") && !s.startsWith("["));
  return plain ? v.join(", ") : JSON.stringify(v);
}
/** The keys of `object` the fields do not edit (kept as they are). */
function rest(object, known) {
  const out = {};
  for (const [k, v] of Object.entries(object)) if (!known.includes(k)) out[k] = v;
  return out;
}
/** Types offered by a select: the known ones, and a value of the document that is none of them. */
const options = (known, value) => (known.includes(value) ? known : known.concat([value]));

/**
 * The editor of `doc` ({attributes, rules}); `report(errors)` shows errors
 * of its own (a view that cannot be switched). Returns its node, `value()`
 * (the document; throws FieldErrors) and `take(doc)` (replaces the
 * attributes and/or rules `doc` has, e.g. pasted into another JSON box).
 */
export function rulesEditor(doc, report) {
  let attrs = [], rules = [];
  let asJson = null; // the JSON box while the JSON view is shown
  const names = el("datalist", { id: "declared-attributes" });
  const attrList = el("div", { class: "rows" });
  const ruleList = el("div", { class: "rows" });
  const body = el("div", {});
  const toggle = el("button", { type: "button", class: "secondary", onclick: () => {
    try { if (asJson) showFields(); else showJson(); } catch (e) { if (e instanceof FieldErrors) report(e.errors); else throw e; }
  } }, "Edit as JSON");
  const addAttr = el("button", { type: "button", class: "secondary", onclick: () => { const row = attributeRow("", { type: "string" }); attrs.push(row); attrList.append(row.node); relabel(); row.c.name.focus(); } }, "Add an attribute");
  const addRule = el("button", { type: "button", class: "secondary", onclick: () => { const row = ruleRow({ type: "equal" }); rules.push(row); ruleList.append(row.node); relabel(); row.c.name.focus(); } }, "Add a rule");
  const fields = el("div", {},
    el("h2", {}, "Attributes"), attrList, el("p", {}, addAttr),
    el("h2", {}, "Rules"), ruleList, el("p", {}, addRule));
  const node = el("fieldset", { class: "rules-editor wide" }, el("legend", {}, "Attributes and rules"),
    el("p", { class: "hint" }, "What tickets send beside mmr, and the rules every two players of a match must meet (docs/rules.md). Lists are comma separated (or a JSON array); [] is an empty list."),
    el("p", {}, toggle), body, names);

  function attributeRow(name, decl) {
    const d = isObject(decl) ? decl : {};
    const type = blank(d.type) ? "string" : String(d.type);
    const c = {
      name: input({ value: name, autocomplete: "off", spellcheck: "false" }),
      type: select(options(ATTRIBUTE_TYPES, type), type),
      values: input({ value: listText(d.values), autocomplete: "off", spellcheck: "false" }),
      default: input({ value: Array.isArray(d.default) ? listText(d.default) : blank(d.default) ? "" : typeof d.default === "string" ? d.default : JSON.stringify(d.default), autocomplete: "off", spellcheck: "false" }),
      min: input({ value: numberText(d.min), inputmode: "decimal", autocomplete: "off" }),
      max: input({ value: numberText(d.max), inputmode: "decimal", autocomplete: "off" }),
      party: select([], ""),
    };
    const w = {
      name: field("Name", c.name),
      type: field("Type", c.type),
      values: field("Values", c.values, { hint: "The only values allowed; empty: any." }),
      default: field("Default", c.default, { hint: "Empty: tickets must send it." }),
      min: field("Min", c.min),
      max: field("Max", c.max),
      party: field("Party", c.party, { hint: "A party's value from its members'." }),
    };
    const legend = el("legend", {});
    const row = { c, legend, extra: rest(d, ["type", "values", "default", "min", "max", "party"]) };
    // The document's party first (kept even when unknown), then what is chosen.
    let chosen = blank(d.party) ? "" : String(d.party);
    const shape = () => {
      const has = ATTRIBUTE_FIELDS[c.type.value] || [];
      for (const k of ["values", "default", "min", "max", "party"]) w[k].hidden = !has.includes(k);
      const party = (PARTY[c.type.value] || []).map((o) => (Array.isArray(o) ? o : [o, o]));
      if (!party.some(([v]) => v === chosen)) chosen = c.party.options.length ? "" : chosen;
      if (chosen && !party.some(([v]) => v === chosen)) party.push([chosen, chosen]);
      fill(c.party, party.map(([v, text]) => el("option", { value: v, selected: v === chosen }, text)));
    };
    c.type.addEventListener("change", shape);
    c.party.addEventListener("change", () => { chosen = c.party.value; });
    c.name.addEventListener("input", relabelNames);
    shape();
    row.node = el("fieldset", { class: "row" }, legend, el("div", { class: "row-fields" }, Object.values(w)),
      el("p", {}, el("button", { type: "button", class: "secondary", onclick: () => { attrs = attrs.filter((r) => r !== row); row.node.remove(); relabel(); addAttr.focus(); } }, "Remove this attribute")));
    return row;
  }

  function ruleRow(rule) {
    const r = isObject(rule) ? rule : {};
    const type = blank(r.type) ? "equal" : String(r.type);
    const c = {
      name: input({ value: blank(r.name) ? "" : String(r.name), autocomplete: "off", spellcheck: "false" }),
      type: select(options(RULE_TYPES, type), type),
      attribute: input({ value: blank(r.attribute) ? "" : String(r.attribute), list: "declared-attributes", autocomplete: "off", spellcheck: "false" }),
      max: input({ value: numberText(r.max), inputmode: "decimal", autocomplete: "off" }),
      minOverlap: input({ value: numberText(r.minOverlap), inputmode: "numeric", autocomplete: "off" }),
    };
    const w = {
      name: field("Name", c.name),
      type: field("Type", c.type),
      attribute: field("Attribute", c.attribute, { hint: "A declared attribute." }),
      max: field("Max", c.max, { hint: "Largest difference." }),
      minOverlap: field("Min overlap", c.minOverlap, { hint: "Values every player shares; empty: 1." }),
    };
    const legend = el("legend", {});
    const stepList = el("div", { class: "steps" });
    const row = { c, legend, steps: [], extra: rest(r, ["name", "type", "attribute", "max", "minOverlap", "relax"]) };
    const shape = () => {
      w.max.hidden = c.type.value !== "distance";
      w.minOverlap.hidden = c.type.value !== "intersect";
      relax.hidden = c.type.value === "avoid";
      for (const step of row.steps) step.shape(c.type.value);
    };
    const addStep = (s) => { const step = stepRow(row, s); row.steps.push(step); stepList.append(step.node); step.shape(c.type.value); return step; };
    const relax = el("fieldset", { class: "relax" }, el("legend", {}, "Relax steps"),
      el("p", { class: "hint" }, "From a player's wait on: a larger max (distance), a smaller min overlap (intersect), or the rule off (equal)."),
      stepList,
      el("p", {}, row.addStep = el("button", { type: "button", class: "secondary", onclick: () => { const step = addStep({}); relabel(); step.c.after.focus(); } }, "Add a step")));
    for (const s of Array.isArray(r.relax) ? r.relax : []) addStep(s);
    c.type.addEventListener("change", shape);
    shape();
    row.node = el("fieldset", { class: "row" }, legend, el("div", { class: "row-fields" }, Object.values(w)), relax,
      el("p", {}, el("button", { type: "button", class: "secondary", onclick: () => { rules = rules.filter((x) => x !== row); row.node.remove(); relabel(); addRule.focus(); } }, "Remove this rule")));
    return row;
  }

  function stepRow(rule, step) {
    const s = isObject(step) ? step : {};
    const c = {
      after: input({ value: numberText(s.afterSeconds), inputmode: "decimal", autocomplete: "off" }),
      max: input({ value: numberText(s.max), inputmode: "decimal", autocomplete: "off" }),
      minOverlap: input({ value: numberText(s.minOverlap), inputmode: "numeric", autocomplete: "off" }),
      off: el("input", { type: "checkbox", checked: s.off !== false }),
    };
    const w = { after: field("After (seconds)", c.after), max: field("Max", c.max), minOverlap: field("Min overlap", c.minOverlap), off: field("Turns the rule off", c.off) };
    const me = { c, legend: el("legend", {}), extra: rest(s, ["afterSeconds", "max", "minOverlap", "off"]) };
    me.shape = (type) => { w.max.hidden = type !== "distance"; w.minOverlap.hidden = type !== "intersect"; w.off.hidden = type !== "equal"; };
    // A fieldset per step, so that each "After (seconds)" is read with its
    // step's number.
    me.node = el("fieldset", { class: "step" }, me.legend, Object.values(w),
      el("button", { type: "button", class: "secondary", onclick: () => { rule.steps = rule.steps.filter((x) => x !== me); me.node.remove(); relabel(); rule.addStep.focus(); } }, "Remove this step"));
    return me;
  }

  /** Legends and datalist from the names typed. */
  function relabelNames() {
    attrs.forEach((row, i) => { row.legend.textContent = "Attribute " + (i + 1); });
    fill(names, attrs.map((row) => row.c.name.value.trim()).filter(Boolean).map((n) => el("option", { value: n })));
  }
  /** Each control's path in the mode's JSON (what errors name), and the rows' legends. */
  function relabel() {
    relabelNames();
    attrs.forEach((row, i) => {
      const at = "attributes." + row.c.name.value.trim();
      row.c.name.dataset.field = at + (i === 0 ? "\nattributes" : "");
      for (const k of ["type", "values", "default", "min", "max", "party"]) row.c[k].dataset.field = at + "." + k;
    });
    rules.forEach((row, i) => {
      const at = "rules[" + i + "]";
      row.legend.textContent = "Rule " + (i + 1);
      row.c.name.dataset.field = at + ".name\n" + at + (i === 0 ? "\nrules" : "");
      for (const k of ["type", "attribute", "max", "minOverlap"]) row.c[k].dataset.field = at + "." + k;
      row.steps.forEach((step, j) => {
        const st = at + ".relax[" + j + "]";
        step.legend.textContent = "Step " + (j + 1) + " of rule " + (i + 1);
        step.c.after.dataset.field = st + ".afterSeconds\n" + st + (j === 0 ? "\n" + at + ".relax" : "");
        for (const k of ["max", "minOverlap", "off"]) step.c[k].dataset.field = st + "." + k;
      });
    });
  }

  /** The document the fields say; throws FieldErrors. */
  function fromFields() {
    relabel();
    const errors = [];
    // The control itself: two rows named alike share a path.
    const bad = (control, message) => errors.push({ field: control.dataset.field.split("\n")[0].replace(/\.$/, ""), message, control });
    const number = (control) => {
      const t = control.value.trim();
      if (!t) return undefined;
      const n = Number(t);
      if (!isFinite(n)) { bad(control, "Not a number: " + t); return undefined; }
      return n;
    };
    const list = (control) => {
      const t = control.value.trim();
      if (!t) return undefined;
      if (t.startsWith("[")) {
        try { const v = JSON.parse(t); if (Array.isArray(v)) return v; } catch (_) { /* said below */ }
        bad(control, "Not a JSON array: write entries comma separated, or e.g. [\"a\", \"b\"]");
        return undefined;
      }
      return t.split(",").map((x) => x.trim()).filter(Boolean);
    };
    const set = (out, key, value) => { if (value !== undefined) out[key] = value; };
    const attributes = {};
    for (const row of attrs) {
      const c = row.c;
      const name = c.name.value.trim();
      if (!name) { bad(c.name, "An attribute needs a name."); continue; }
      if (Object.prototype.hasOwnProperty.call(attributes, name)) { bad(c.name, name + " is declared twice."); continue; }
      const type = c.type.value;
      const has = ATTRIBUTE_FIELDS[type] || [];
      const out = Object.assign({}, row.extra, { type });
      if (has.includes("values")) set(out, "values", list(c.values));
      if (has.includes("min")) set(out, "min", number(c.min));
      if (has.includes("max")) set(out, "max", number(c.max));
      if (has.includes("default")) {
        const t = c.default.value;
        if (type === "number") set(out, "default", number(c.default));
        else if (type === "string") set(out, "default", t.trim() ? t : undefined);
        else set(out, "default", list(c.default));
      }
      if (has.includes("party") && c.party.value) out.party = c.party.value;
      attributes[name] = out;
    }
    const ruleDocs = rules.map((row) => {
      const c = row.c;
      const type = c.type.value;
      const out = Object.assign({}, row.extra, { name: c.name.value.trim(), type, attribute: c.attribute.value.trim() });
      if (type === "distance") set(out, "max", number(c.max));
      if (type === "intersect") set(out, "minOverlap", number(c.minOverlap));
      if (type !== "avoid" && row.steps.length) {
        out.relax = row.steps.map((step) => {
          const s = Object.assign({}, step.extra);
          set(s, "afterSeconds", number(step.c.after));
          if (type === "distance") set(s, "max", number(step.c.max));
          if (type === "intersect") set(s, "minOverlap", number(step.c.minOverlap));
          if (type === "equal") s.off = step.c.off.checked;
          return s;
        });
      }
      return out;
    });
    if (errors.length) throw new FieldErrors(errors);
    const out = {};
    if (attrs.length) out.attributes = attributes;
    if (rules.length) out.rules = ruleDocs;
    return out;
  }
  /** The document the JSON box says; throws FieldErrors. */
  function fromJson() {
    let v;
    try { v = asJson.value.trim() ? JSON.parse(asJson.value) : {}; } catch (e) { throw new FieldErrors([{ field: "attributes", message: "Not JSON: " + e.message }]); }
    if (!isObject(v)) throw new FieldErrors([{ field: "attributes", message: "Write a JSON object with attributes and rules." }]);
    const other = Object.keys(v).filter((k) => k !== "attributes" && k !== "rules");
    if (other.length) throw new FieldErrors([{ field: "attributes", message: "Only attributes and rules here; " + other.join(", ") + " go in Other settings." }]);
    return v;
  }
  function showAttributes(a) {
    attrs = isObject(a) ? Object.entries(a).map(([n, decl]) => attributeRow(n, decl)) : [];
    fill(attrList, attrs.map((r) => r.node));
  }
  function showRules(r) {
    rules = Array.isArray(r) ? r.map(ruleRow) : [];
    fill(ruleList, rules.map((x) => x.node));
  }
  function showRows(d) {
    showAttributes(d.attributes);
    showRules(d.rules);
    relabel();
  }
  function showJson() {
    const d = fromFields();
    asJson = el("textarea", { rows: 14, spellcheck: "false" }, JSON.stringify(d, null, 2));
    fill(body, field("Attributes and rules (JSON)", asJson, { name: "attributes\nrules", wide: true, hint: "An object with attributes and rules, as in the mode's JSON." }));
    toggle.textContent = "Edit as fields";
    asJson.focus();
  }
  function showFields() {
    const d = fromJson();
    asJson = null;
    showRows(d);
    fill(body, fields);
    toggle.textContent = "Edit as JSON";
  }
  /** The mode's attributes and rules, from whichever view is shown. */
  function value() { return asJson ? fromJson() : fromFields(); }
  /** Replaces the attributes and/or the rules `d` has. */
  function take(d) {
    if (asJson) { asJson.value = JSON.stringify(Object.assign(fromJson(), d), null, 2); return; }
    if ("attributes" in d) showAttributes(d.attributes);
    if ("rules" in d) showRules(d.rules);
    relabel();
  }

  showRows(isObject(doc) ? doc : {});
  fill(body, fields);
  return { node, value, take };
}
