import { type FormEvent, useMemo, useState } from "react";
import { buildArguments, fieldsFor, type FormField } from "../model/schemaForm";
import type { Action, ToolDeclaration } from "../model/types";
import { Empty, Panel } from "./Panel";

interface Props {
  tools: ToolDeclaration[];
  /** IDs the agent has seen so far, offered as suggestions for ID parameters. */
  knownIds: string[];
  jobIds: string[];
  disabled: boolean;
  onRun: (action: Action) => Promise<boolean>;
}

const CATEGORY_ORDER = ["investigation", "os", "terminal"];

function suggestionsFor(field: FormField, knownIds: string[], jobIds: string[]): string[] {
  if (field.name === "job_id") return jobIds;
  if (field.idPrefix) return knownIds.filter((id) => id.startsWith(`${field.idPrefix}-`));
  if (/_ids?$|^subjects$/.test(field.name)) return knownIds;
  return [];
}

/** Drive the episode by hand: pick a tool and fill its parameters from the server's schema. */
export function ManualStep({ tools, knownIds, jobIds, disabled, onRun }: Props) {
  const [toolName, setToolName] = useState("");
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const tool = tools.find((t) => t.name === toolName);
  const fields = useMemo(() => (tool ? fieldsFor(tool.parameters) : []), [tool]);
  const grouped = CATEGORY_ORDER.map((c) => ({ category: c, tools: tools.filter((t) => t.category === c) }))
    .concat([{ category: "other", tools: tools.filter((t) => !CATEGORY_ORDER.includes(t.category)) }])
    .filter((g) => g.tools.length > 0);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!tool) return;
    const built = buildArguments(fields, values);
    if (!built.ok) {
      setErrors(built.errors);
      return;
    }
    setErrors({});
    if (await onRun({ tool: tool.name, arguments: built.arguments })) setValues({});
  };

  if (tools.length === 0) {
    return (
      <Panel title="Manual step" testId="manual-step">
        <Empty>The tool schema has not loaded (see errors above).</Empty>
      </Panel>
    );
  }
  return (
    <Panel title="Manual step" testId="manual-step" badge={`${tools.length} tools`}>
      <form className="manual" onSubmit={(e) => void submit(e)}>
        <label>
          Tool
          <select value={toolName} onChange={(e) => { setToolName(e.target.value); setValues({}); setErrors({}); }} data-testid="tool-select">
            <option value="">choose a tool…</option>
            {grouped.map((g) => (
              <optgroup key={g.category} label={g.category}>
                {g.tools.map((t) => <option key={t.name} value={t.name}>{t.name}</option>)}
              </optgroup>
            ))}
          </select>
        </label>
        {tool && <p className="muted small tool-description">{tool.description}</p>}
        {fields.map((field) => {
          const suggestions = suggestionsFor(field, knownIds, jobIds);
          const listId = `suggest-${field.name}`;
          const common = {
            id: `field-${field.name}`,
            name: field.name,
            value: values[field.name] ?? "",
            placeholder: field.placeholder,
            "data-testid": `field-${field.name}`,
            "aria-invalid": errors[field.name] ? true : undefined,
            onChange: (e: { target: { value: string } }) => setValues({ ...values, [field.name]: e.target.value }),
          };
          return (
            <label key={field.name} className="field">
              <span className="field-name">
                {field.name}{field.required && <span className="required">*</span>}
                <span className="muted small"> {field.kind}</span>
              </span>
              {field.kind === "enum" ? (
                <select {...common}>
                  <option value="">{field.required ? "choose…" : "(default)"}</option>
                  {field.options.map((o) => <option key={o} value={o}>{o}</option>)}
                </select>
              ) : field.kind === "textarea" || field.kind === "json" ? (
                <textarea {...common} rows={field.kind === "json" ? 4 : 3} />
              ) : field.kind === "boolean" ? (
                <select {...common}>
                  <option value="">(default)</option><option value="true">true</option><option value="false">false</option>
                </select>
              ) : (
                <input {...common} type={field.kind === "integer" || field.kind === "number" ? "number" : "text"}
                  step={field.kind === "number" ? "any" : undefined} list={suggestions.length > 0 && field.kind !== "list" ? listId : undefined} />
              )}
              {suggestions.length > 0 && field.kind !== "list" && (
                <datalist id={listId}>{suggestions.map((s) => <option key={s} value={s} />)}</datalist>
              )}
              {field.kind === "list" && suggestions.length > 0 && (
                <select className="add-id" value="" aria-label={`add an ID to ${field.name}`}
                  onChange={(e) => setValues({ ...values, [field.name]: `${values[field.name] ? `${values[field.name]}, ` : ""}${e.target.value}` })}>
                  <option value="">+ add a seen ID…</option>
                  {suggestions.map((s) => <option key={s} value={s}>{s}</option>)}
                </select>
              )}
              <span className="muted small">{field.description}</span>
              {errors[field.name] && <span className="field-error" data-testid="field-error">{errors[field.name]}</span>}
            </label>
          );
        })}
        <button type="submit" className="primary" disabled={disabled || !tool} data-testid="run-tool">
          Run {tool ? tool.name : "tool"}
        </button>
      </form>
    </Panel>
  );
}
