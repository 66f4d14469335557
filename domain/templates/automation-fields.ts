import type { TemplateDefinition, VariableField, VariableType } from './template.types';

/**
 * A template's variables as automation-platform input fields (spec, GET …/automation-fields):
 * what a Zapier- or Make-style builder shows as the form behind "generate a document".
 * Calculated variables and constants are not inputs, so they are not fields.
 */

export interface AutomationChild {
  key: string;
  label: string;
  type: VariableType;
}

export interface AutomationField extends AutomationChild {
  required: boolean;
  /** Only on array fields: the columns of one element (empty for arrays of plain values). */
  children?: AutomationChild[];
}

/** `invoiceNumber` / `due_date` → `Invoice Number` / `Due Date`. */
export function fieldLabel(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');
}

function child(f: VariableField): AutomationChild {
  return { key: f.name, label: fieldLabel(f.name), type: f.type };
}

export function automationFields(def: Pick<TemplateDefinition, 'variables'>): AutomationField[] {
  return (def.variables ?? []).map((v) => {
    const field: AutomationField = { key: v.name, label: fieldLabel(v.name), type: v.type, required: v.required === true };
    if (v.type === 'array') field.children = (v.items?.properties ?? []).map(child);
    return field;
  });
}
