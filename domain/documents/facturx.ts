import Decimal from 'decimal.js';
import { XMLBuilder } from 'fast-xml-parser';
import { AppError } from '../errors';

/**
 * The Factur-X / ZUGFeRD e-invoice (EN 16931 profile, `output.facturx`) made from a template's
 * resolved variables (constants and calculated variables included): docs/documents.md "PDF/A and
 * e-invoices" has the table. The mapping is by name: each invoice field (its EN 16931 business
 * term, BT-n) reads the first of its variable names that holds a value. What EN 16931 requires and
 * the variables do not give fails the job with ERR_OUTPUT_002 and every problem in
 * `relatedInfo.errors: [{path, message}]`.
 *
 * Amounts are decimal, never binary floats: inputs are read through their shortest decimal form
 * (0.17, not 0.17000000000000001) and rounded half away from zero (quantities and prices to 4
 * places, amounts to 2). The totals are computed from the lines as EN 16931 defines them (BR-CO-10
 * to BR-CO-17); a template's own `total` or `vat` (printed on the page) is compared with them, so
 * the XML and the page cannot say different things.
 */

const D = Decimal.clone({ rounding: Decimal.ROUND_HALF_UP, precision: 40 });
type Dec = InstanceType<typeof D>;

export interface FacturxProblem {
  /** The variable (path) at fault, as the template names it: `seller.country`, `lines[1].unitPrice`. */
  path: string;
  message: string;
}

/** An invoice field and the variable names it reads, first found wins (the documented mapping). */
interface Source {
  bt: string;
  /** Paths relative to the variables (or to a party or a line for those fields). */
  names: string[];
  what: string;
}

const src = (bt: string, what: string, ...names: string[]): Source => ({ bt, what, names });

/** The invoice's top-level fields. */
const INVOICE_SOURCES = {
  number: src('BT-1', 'the invoice number', 'invoiceNumber', 'number'),
  issueDate: src('BT-2', 'the issue date', 'issueDate', 'issuedOn', 'invoiceDate'),
  typeCode: src('BT-3', 'the invoice type code (380 invoice, 381 credit note, 384 corrected invoice, 389 self-billed)', 'invoiceTypeCode'),
  currency: src('BT-5', 'the currency (ISO 4217, like EUR)', 'currency', 'currencyCode'),
  dueDate: src('BT-9', 'the payment due date', 'dueDate', 'dueOn'),
  buyerReference: src('BT-10', 'the buyer reference', 'buyerReference'),
  orderReference: src('BT-13', 'the purchase order reference', 'orderReference', 'purchaseOrder'),
  paymentTerms: src('BT-20', 'the payment terms', 'paymentTerms'),
  paymentReference: src('BT-83', 'the remittance information', 'paymentReference'),
  seller: src('BG-4', 'the seller', 'seller'),
  buyer: src('BG-7', 'the buyer', 'buyer', 'customer'),
  lines: src('BG-25', 'the invoice lines', 'lines', 'items', 'lineItems'),
  vatRate: src('BT-152', 'the VAT rate as a fraction (0.19)', 'vatRate'),
  vatPercent: src('BT-152', 'the VAT rate in percent (19)', 'vatPercent'),
  vatCategory: src('BT-151', 'the VAT category code (S, Z, E, AE, K, G, O, L, M)', 'vatCategory'),
  vatExemptionReason: src('BT-120', 'the VAT exemption reason', 'vatExemptionReason'),
  discount: src('BT-92', 'a document-level discount (an amount)', 'discount'),
  discountReason: src('BT-97', 'the discount reason', 'discountReason'),
  paidAmount: src('BT-113', 'the amount already paid', 'paidAmount', 'prepaidAmount'),
  total: src('BT-112', 'the printed total (compared)', 'total', 'grandTotal'),
  vat: src('BT-110', 'the printed VAT total (compared)', 'vat', 'vatAmount', 'taxTotal'),
} as const;

/** The fields of `seller` and `buyer` (BG-4, BG-7). */
const PARTY_SOURCES = {
  name: src('BT-27/BT-44', 'the name', 'name'),
  id: src('BT-29/BT-46', 'an identifier', 'id'),
  registrationId: src('BT-30/BT-47', 'the legal registration identifier', 'registrationId'),
  vatId: src('BT-31/BT-48', 'the VAT identifier', 'vatId'),
  taxNumber: src('BT-32', 'the tax registration number (seller)', 'taxNumber'),
  street: src('BT-35/BT-50', 'the address line', 'street', 'address'),
  postcode: src('BT-38/BT-53', 'the post code', 'postcode', 'postalCode', 'zip'),
  city: src('BT-37/BT-52', 'the city', 'city'),
  country: src('BT-40/BT-55', 'the country code (ISO 3166-1 alpha-2, like DE)', 'country', 'countryCode'),
  email: src('BT-34/BT-49', 'the electronic address (email)', 'email'),
  iban: src('BT-84', 'the IBAN to pay to (seller)', 'iban'),
  bic: src('BT-86', 'the BIC (seller)', 'bic'),
} as const;

/** The fields of each line (BG-25). */
const LINE_SOURCES = {
  id: src('BT-126', 'the line identifier (default its position)', 'id', 'lineId'),
  name: src('BT-153', 'the item name', 'description', 'name'),
  quantity: src('BT-129', 'the quantity', 'quantity', 'qty'),
  unitCode: src('BT-130', 'the unit code (UN/ECE rec. 20, default C62 "one")', 'unitCode', 'unit'),
  unitPrice: src('BT-146', 'the net unit price', 'unitPrice', 'price'),
  amount: src('BT-131', 'the printed line amount (compared)', 'amount', 'lineTotal'),
  vatRate: src('BT-152', "the line's VAT rate as a fraction", 'vatRate'),
  vatPercent: src('BT-152', "the line's VAT rate in percent", 'vatPercent'),
  vatCategory: src('BT-151', "the line's VAT category code", 'vatCategory'),
} as const;

const TYPE_CODES = ['380', '381', '384', '389'];
const VAT_CATEGORIES = ['S', 'Z', 'E', 'AE', 'K', 'G', 'O', 'L', 'M'];
/** Categories whose breakdown needs an exemption reason (BR-E-10, BR-AE-10, BR-IC-10, BR-G-10, BR-O-10). */
const EXEMPT = ['E', 'AE', 'K', 'G', 'O'];
const MAX_LINES = 10_000;
/** Problems listed in relatedInfo.errors (and fewer in the message): a list of 10,000 bad lines is cut. */
const MAX_PROBLEMS = 50;
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Text without the characters XML 1.0 cannot carry (controls, lone surrogates): they print as nothing either. */
export const xmlText = (s: string) => s.replace(NOT_XML, '');
const MAX_TEXT = 1000;

interface Party {
  name: string;
  id?: string;
  registrationId?: string;
  vatId?: string;
  taxNumber?: string;
  street?: string;
  postcode?: string;
  city?: string;
  country: string;
  email?: string;
  iban?: string;
  bic?: string;
}

interface Vat {
  category: string;
  /** Percent, absent for category O. */
  percent?: Dec;
}

interface Line {
  id: string;
  name: string;
  quantity: Dec;
  unitCode: string;
  unitPrice: Dec;
  amount: Dec;
  vat: Vat;
}

interface Breakdown {
  vat: Vat;
  basis: Dec;
  tax: Dec;
}

/** The invoice as the XML says it (amounts already rounded). */
export interface FacturxInvoice {
  number: string;
  typeCode: string;
  issueDate: string;
  currency: string;
  dueDate?: string;
  buyerReference?: string;
  orderReference?: string;
  paymentTerms?: string;
  paymentReference?: string;
  seller: Party;
  buyer: Party;
  lines: Line[];
  discount?: { amount: Dec; reason: string; vat: Vat };
  exemptionReason?: string;
  breakdown: Breakdown[];
  totals: { lines: Dec; allowances: Dec; taxBasis: Dec; tax: Dec; grand: Dec; paid: Dec; due: Dec };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown) => v !== undefined && v !== null && v !== '';

/** Reads the invoice from the variables; throws ERR_OUTPUT_002 listing every problem. */
export function invoiceFromVariables(variables: Record<string, unknown>): FacturxInvoice {
  const problems: FacturxProblem[] = [];
  const fail = (path: string, message: string) => {
    problems.push({ path, message });
    return undefined;
  };

  /** The first name of `source` with a value in `obj`: [its path, its value]. */
  const pick = (obj: Record<string, unknown>, source: Source, prefix: string): [string, unknown] | undefined => {
    for (const name of source.names) if (present(obj[name])) return [prefix + name, obj[name]];
    return undefined;
  };
  const missing = (source: Source, prefix: string) =>
    fail(prefix + source.names[0], `${source.what} (${source.bt}) is required: set ${source.names.map((n) => `\`${prefix}${n}\``).join(' or ')}`);

  const text = (obj: Record<string, unknown>, source: Source, prefix: string, required: boolean): string | undefined => {
    const found = pick(obj, source, prefix);
    if (!found) return required ? missing(source, prefix) : undefined;
    const [path, v] = found;
    if (typeof v !== 'string' && typeof v !== 'number') return fail(path, `${source.what} (${source.bt}) must be text`);
    const s = xmlText(String(v)).trim();
    if (!s) return required ? missing(source, prefix) : undefined;
    if (s.length > MAX_TEXT) return fail(path, `${source.what} (${source.bt}) is longer than ${MAX_TEXT} characters`);
    return s;
  };
  const number = (obj: Record<string, unknown>, source: Source, prefix: string, required: boolean): Dec | undefined => {
    const found = pick(obj, source, prefix);
    if (!found) return required ? missing(source, prefix) : undefined;
    const [path, v] = found;
    const d = toDecimal(v);
    return d ?? fail(path, `${source.what} (${source.bt}) must be a number`);
  };
  const date = (obj: Record<string, unknown>, source: Source, required: boolean): string | undefined => {
    const found = pick(obj, source, '');
    if (!found) return required ? missing(source, '') : undefined;
    const [path, v] = found;
    const iso = v instanceof Date ? (Number.isNaN(v.getTime()) ? undefined : v.toISOString()) : typeof v === 'string' ? v.trim() : undefined;
    const m = iso && /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(iso);
    return m ? `${m[1]}${m[2]}${m[3]}` : fail(path, `${source.what} (${source.bt}) must be a date (YYYY-MM-DD)`);
  };
  const code = (obj: Record<string, unknown>, source: Source, prefix: string, allowed: RegExp | string[], required: boolean): string | undefined => {
    const s = text(obj, source, prefix, required);
    if (s === undefined) return undefined;
    const up = s.toUpperCase();
    const ok = Array.isArray(allowed) ? allowed.includes(up) : allowed.test(up);
    return ok ? up : fail(pick(obj, source, prefix)![0], `${source.what} (${source.bt}): '${s}' is not a valid code${Array.isArray(allowed) ? ` (${allowed.join(', ')})` : ''}`);
  };

  /** A VAT rate and category from `obj` (a line, or the invoice); undefined when it says nothing. */
  const vatOf = (obj: Record<string, unknown>, s: typeof INVOICE_SOURCES | typeof LINE_SOURCES, prefix: string): Vat | undefined | null => {
    const category = code(obj, s.vatCategory, prefix, VAT_CATEGORIES, false);
    const fraction = number(obj, s.vatRate, prefix, false);
    const percentGiven = number(obj, s.vatPercent, prefix, false);
    const percent = percentGiven ?? fraction?.times(100);
    if (percent === undefined && category === undefined) return undefined;
    const at = prefix + (category !== undefined ? s.vatCategory.names[0] : s.vatRate.names[0]);
    if (percent && (percent.isNegative() || percent.greaterThan(100))) return fail(at, `the VAT rate (BT-152) must be between 0 and 100 %`) ?? null;
    const cat = category ?? (percent && percent.greaterThan(0) ? 'S' : undefined);
    if (!cat) return fail(prefix + s.vatCategory.names[0], 'a VAT rate of 0 needs its category (BT-151): Z (zero rated), E (exempt), AE (reverse charge), K (intra-community), G (export) or O (outside scope)') ?? null;
    if (cat === 'O') {
      if (percent && !percent.isZero()) return fail(at, 'category O (not subject to VAT) has no VAT rate') ?? null;
      return { category: cat };
    }
    if (percent === undefined) return fail(prefix + s.vatRate.names[0], `category ${cat} needs its rate (\`${prefix}vatRate\` as a fraction or \`${prefix}vatPercent\`)`) ?? null;
    if (['Z', 'E', 'AE', 'K', 'G'].includes(cat) && !percent.isZero()) return fail(at, `category ${cat} has a VAT rate of 0`) ?? null;
    if (['S', 'L', 'M'].includes(cat) && percent.isZero()) return fail(at, `category ${cat} needs a VAT rate above 0`) ?? null;
    return { category: cat, percent: percent.toDecimalPlaces(2) };
  };

  const party = (key: typeof INVOICE_SOURCES.seller | typeof INVOICE_SOURCES.buyer): Party | undefined => {
    const found = pick(variables, key, '');
    if (!found) return missing(key, '');
    const [name, v] = found;
    if (!isRecord(v)) return fail(name, `${key.what} (${key.bt}) must be an object with name, address and country`);
    const p = `${name}.`;
    const t = (s: Source, required = false) => text(v, s, p, required);
    const out: Partial<Party> = {
      name: t(PARTY_SOURCES.name, true),
      id: t(PARTY_SOURCES.id),
      registrationId: t(PARTY_SOURCES.registrationId),
      vatId: t(PARTY_SOURCES.vatId)?.replace(/\s+/g, ''),
      taxNumber: t(PARTY_SOURCES.taxNumber),
      street: t(PARTY_SOURCES.street),
      postcode: t(PARTY_SOURCES.postcode),
      city: t(PARTY_SOURCES.city),
      country: code(v, PARTY_SOURCES.country, p, /^[A-Z]{2}$/, true),
      email: t(PARTY_SOURCES.email),
      iban: t(PARTY_SOURCES.iban)?.replace(/\s+/g, '').toUpperCase(),
      bic: t(PARTY_SOURCES.bic)?.replace(/\s+/g, '').toUpperCase(),
    };
    if (out.iban !== undefined && !/^[A-Z]{2}\d{2}[A-Z0-9]{8,30}$/.test(out.iban)) fail(`${p}iban`, 'the IBAN (BT-84) is not an IBAN');
    return out.name && out.country ? (out as Party) : undefined;
  };

  const number_ = text(variables, INVOICE_SOURCES.number, '', true);
  const issueDate = date(variables, INVOICE_SOURCES.issueDate, true);
  const typeCode = code(variables, INVOICE_SOURCES.typeCode, '', TYPE_CODES, false) ?? '380';
  const currency = code(variables, INVOICE_SOURCES.currency, '', /^[A-Z]{3}$/, true);
  const dueDate = date(variables, INVOICE_SOURCES.dueDate, false);
  const seller = party(INVOICE_SOURCES.seller);
  const buyer = party(INVOICE_SOURCES.buyer);
  const invoiceVat = vatOf(variables, INVOICE_SOURCES, '');
  const exemptionReason = text(variables, INVOICE_SOURCES.vatExemptionReason, '', false);

  const lines: Line[] = [];
  const linesFound = pick(variables, INVOICE_SOURCES.lines, '');
  if (!linesFound) missing(INVOICE_SOURCES.lines, '');
  else if (!Array.isArray(linesFound[1]) || linesFound[1].length === 0) fail(linesFound[0], 'the invoice lines (BG-25) must be a list of at least one line');
  else if (linesFound[1].length > MAX_LINES) fail(linesFound[0], `an e-invoice has at most ${MAX_LINES} lines`);
  else {
    linesFound[1].forEach((raw, i) => {
      const p = `${linesFound[0]}[${i}].`;
      if (!isRecord(raw)) return fail(p.slice(0, -1), 'a line must be an object with description, quantity and unit price');
      const name = text(raw, LINE_SOURCES.name, p, true);
      const quantity = number(raw, LINE_SOURCES.quantity, p, true)?.toDecimalPlaces(4);
      const unitPrice = number(raw, LINE_SOURCES.unitPrice, p, true)?.toDecimalPlaces(4);
      const unitCode = code(raw, LINE_SOURCES.unitCode, p, /^[A-Z0-9]{1,3}$/, false) ?? 'C62';
      const id = text(raw, LINE_SOURCES.id, p, false) ?? String(i + 1);
      const printed = number(raw, LINE_SOURCES.amount, p, false);
      const own = vatOf(raw, LINE_SOURCES, p);
      const vat = own === undefined ? invoiceVat : own;
      if (own === undefined && invoiceVat === undefined) fail(`${p}vatRate`, 'the VAT of the line (BT-151, BT-152) is required: set `vatRate` (a fraction) or `vatPercent` with `vatCategory` when it is not S, on the invoice or on the line');
      if (unitPrice?.isNegative()) fail(`${p}${LINE_SOURCES.unitPrice.names[0]}`, 'the net unit price (BT-146) cannot be negative (BR-27)');
      if (!name || !quantity || !unitPrice || !vat) return;
      const amount = quantity.times(unitPrice).toDecimalPlaces(2);
      if (printed && !printed.toDecimalPlaces(2).equals(amount)) {
        fail(pick(raw, LINE_SOURCES.amount, p)![0], `the line amount ${printed.toDecimalPlaces(2).toFixed(2)} is not quantity × unit price (${amount.toFixed(2)})`);
      }
      lines.push({ id, name, quantity, unitCode, unitPrice, amount, vat });
    });
  }

  // A document-level discount carries the invoice's VAT, or the lines' one when they all share it.
  const discountAmount = number(variables, INVOICE_SOURCES.discount, '', false)?.toDecimalPlaces(2);
  let discount: FacturxInvoice['discount'];
  if (discountAmount?.isNegative()) fail('discount', 'the discount (BT-92) cannot be negative');
  else if (discountAmount && discountAmount.greaterThan(0)) {
    const keys = new Set(lines.map((l) => vatKey(l.vat)));
    const vat = invoiceVat ?? (keys.size === 1 ? lines[0].vat : undefined);
    if (!vat) fail('vatRate', 'a discount over lines of several VAT rates needs the invoice-level `vatRate`/`vatCategory` it applies to');
    else discount = { amount: discountAmount, reason: text(variables, INVOICE_SOURCES.discountReason, '', false) ?? 'Discount', vat };
  }

  // The VAT breakdown (BG-23), one per category and rate: basis and tax rounded per group (BR-CO-17).
  const groups = new Map<string, Breakdown>();
  const group = (vat: Vat) => {
    const key = vatKey(vat);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { vat, basis: new D(0), tax: new D(0) }));
    return g;
  };
  for (const l of lines) group(l.vat).basis = group(l.vat).basis.plus(l.amount);
  if (discount) group(discount.vat).basis = group(discount.vat).basis.minus(discount.amount);
  for (const g of groups.values()) g.tax = g.vat.percent ? g.basis.times(g.vat.percent).dividedBy(100).toDecimalPlaces(2) : new D(0);
  const breakdown = [...groups.values()];
  if (breakdown.some((b) => EXEMPT.includes(b.vat.category)) && !exemptionReason) {
    fail('vatExemptionReason', `VAT categories ${EXEMPT.join(', ')} need the exemption reason (BT-120): set \`vatExemptionReason\``);
  }

  const sum = (xs: Dec[]) => xs.reduce((a, b) => a.plus(b), new D(0));
  const lineTotal = sum(lines.map((l) => l.amount));
  const allowances = discount?.amount ?? new D(0);
  const taxBasis = lineTotal.minus(allowances);
  const tax = sum(breakdown.map((b) => b.tax));
  const grand = taxBasis.plus(tax);
  const paid = number(variables, INVOICE_SOURCES.paidAmount, '', false)?.toDecimalPlaces(2) ?? new D(0);
  const due = grand.minus(paid);

  if (problems.length === 0) {
    compare(variables, INVOICE_SOURCES.total, grand, fail);
    compare(variables, INVOICE_SOURCES.vat, tax, fail);
  }
  const paymentTerms = text(variables, INVOICE_SOURCES.paymentTerms, '', false);
  if (due.greaterThan(0) && !dueDate && !paymentTerms) fail('dueDate', 'an amount due needs a due date (BT-9, `dueDate` or `dueOn`) or payment terms (BT-20, `paymentTerms`) (BR-CO-25)');
  if (seller && !seller.vatId && !seller.id && !seller.registrationId) fail('seller.vatId', 'the seller needs a VAT identifier (`seller.vatId`), an identifier (`seller.id`) or a legal registration identifier (`seller.registrationId`) (BR-CO-26)');
  if (seller && breakdown.some((b) => ['S', 'Z', 'E', 'AE', 'K', 'G', 'L', 'M'].includes(b.vat.category)) && !seller.vatId && !seller.taxNumber) {
    fail('seller.vatId', 'an invoice with VAT needs the seller\'s VAT identifier (`seller.vatId`) or tax number (`seller.taxNumber`)');
  }
  if (buyer && breakdown.some((b) => ['AE', 'K'].includes(b.vat.category)) && !buyer.vatId) fail(`${pick(variables, INVOICE_SOURCES.buyer, '')![0]}.vatId`, 'reverse charge and intra-community supplies need the buyer\'s VAT identifier (BT-48)');

  if (problems.length > 0 || !number_ || !issueDate || !currency || !seller || !buyer) {
    const shown = problems.slice(0, 10).map((p) => `${p.path}: ${p.message}`);
    if (problems.length > shown.length) shown.push(`and ${problems.length - shown.length} more`);
    throw new AppError('ERR_OUTPUT_002', `The e-invoice could not be made from the variables: ${shown.join('; ')}`, { errors: problems.slice(0, MAX_PROBLEMS) });
  }
  return {
    number: number_,
    typeCode,
    issueDate,
    currency,
    dueDate,
    buyerReference: text(variables, INVOICE_SOURCES.buyerReference, '', false),
    orderReference: text(variables, INVOICE_SOURCES.orderReference, '', false),
    paymentTerms,
    paymentReference: text(variables, INVOICE_SOURCES.paymentReference, '', false),
    seller,
    buyer,
    lines,
    discount,
    exemptionReason,
    breakdown,
    totals: { lines: lineTotal, allowances, taxBasis, tax, grand, paid, due },
  };
}

const vatKey = (v: Vat) => `${v.category}:${v.percent?.toFixed(2) ?? ''}`;

/** A number or a numeric string, in its shortest decimal form; undefined otherwise. */
function toDecimal(v: unknown): Dec | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? new D(String(v)) : undefined;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) return new D(v.trim());
  return undefined;
}

/** A printed amount that disagrees with the computed one (to the cent) is a mistake in the template. */
function compare(variables: Record<string, unknown>, source: Source, computed: Dec, fail: (path: string, message: string) => undefined) {
  const name = source.names.find((n) => present(variables[n]));
  if (!name) return;
  const printed = toDecimal(variables[name]);
  if (!printed) return fail(name, `${source.what} must be a number`);
  if (!printed.toDecimalPlaces(2).equals(computed)) {
    fail(name, `the template's ${name} ${printed.toDecimalPlaces(2).toFixed(2)} differs from the amount computed from the lines (${source.bt}: ${computed.toFixed(2)})`);
  }
}

// ---------------------------------------------------------------------------------------------
// The XML: UN/CEFACT Cross Industry Invoice D16B as Factur-X 1.07 (EN 16931 profile) constrains it.

const amount = (d: Dec) => d.toFixed(2);
/** A quantity or price: at least 2 decimals, at most 4, no trailing zeros past 2. */
const fine = (d: Dec) => {
  const s = d.toFixed(4).replace(/0{1,2}$/, '');
  return s;
};
const dateTime = (yyyymmdd: string) => ({ 'udt:DateTimeString': { '@_format': '102', '#text': yyyymmdd } });
const tax = (v: Vat) => ({ 'ram:TypeCode': 'VAT', 'ram:CategoryCode': v.category, ...(v.percent ? { 'ram:RateApplicablePercent': amount(v.percent) } : {}) });

function party(p: Party, seller: boolean) {
  const address = {
    ...(p.postcode ? { 'ram:PostcodeCode': p.postcode } : {}),
    ...(p.street ? { 'ram:LineOne': p.street } : {}),
    ...(p.city ? { 'ram:CityName': p.city } : {}),
    'ram:CountryID': p.country,
  };
  const registrations = [
    ...(p.vatId ? [{ 'ram:ID': { '@_schemeID': 'VA', '#text': p.vatId } }] : []),
    ...(seller && p.taxNumber ? [{ 'ram:ID': { '@_schemeID': 'FC', '#text': p.taxNumber } }] : []),
  ];
  return {
    ...(p.id ? { 'ram:ID': p.id } : {}),
    'ram:Name': p.name,
    ...(p.registrationId ? { 'ram:SpecifiedLegalOrganization': { 'ram:ID': p.registrationId } } : {}),
    'ram:PostalTradeAddress': address,
    ...(p.email ? { 'ram:URIUniversalCommunication': { 'ram:URIID': { '@_schemeID': 'EM', '#text': p.email } } } : {}),
    ...(registrations.length ? { 'ram:SpecifiedTaxRegistration': registrations } : {}),
  };
}

/** The CII XML of an invoice (`factur-x.xml`). */
export function facturxXml(inv: FacturxInvoice): string {
  const { totals, seller } = inv;
  const doc = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    'rsm:CrossIndustryInvoice': {
      '@_xmlns:rsm': 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
      '@_xmlns:qdt': 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
      '@_xmlns:ram': 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
      '@_xmlns:udt': 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
      'rsm:ExchangedDocumentContext': {
        'ram:GuidelineSpecifiedDocumentContextParameter': { 'ram:ID': 'urn:cen.eu:en16931:2017' },
      },
      'rsm:ExchangedDocument': {
        'ram:ID': inv.number,
        'ram:TypeCode': inv.typeCode,
        'ram:IssueDateTime': dateTime(inv.issueDate),
      },
      'rsm:SupplyChainTradeTransaction': {
        'ram:IncludedSupplyChainTradeLineItem': inv.lines.map((l) => ({
          'ram:AssociatedDocumentLineDocument': { 'ram:LineID': l.id },
          'ram:SpecifiedTradeProduct': { 'ram:Name': l.name },
          'ram:SpecifiedLineTradeAgreement': { 'ram:NetPriceProductTradePrice': { 'ram:ChargeAmount': fine(l.unitPrice) } },
          'ram:SpecifiedLineTradeDelivery': { 'ram:BilledQuantity': { '@_unitCode': l.unitCode, '#text': fine(l.quantity) } },
          'ram:SpecifiedLineTradeSettlement': {
            'ram:ApplicableTradeTax': tax(l.vat),
            'ram:SpecifiedTradeSettlementLineMonetarySummation': { 'ram:LineTotalAmount': amount(l.amount) },
          },
        })),
        'ram:ApplicableHeaderTradeAgreement': {
          ...(inv.buyerReference ? { 'ram:BuyerReference': inv.buyerReference } : {}),
          'ram:SellerTradeParty': party(seller, true),
          'ram:BuyerTradeParty': party(inv.buyer, false),
          ...(inv.orderReference ? { 'ram:BuyerOrderReferencedDocument': { 'ram:IssuerAssignedID': inv.orderReference } } : {}),
        },
        'ram:ApplicableHeaderTradeDelivery': '',
        'ram:ApplicableHeaderTradeSettlement': {
          ...(inv.paymentReference ? { 'ram:PaymentReference': inv.paymentReference } : {}),
          'ram:InvoiceCurrencyCode': inv.currency,
          ...(seller.iban
            ? {
                'ram:SpecifiedTradeSettlementPaymentMeans': {
                  // 58: SEPA credit transfer; 30: credit transfer outside SEPA.
                  'ram:TypeCode': SEPA.has(seller.iban.slice(0, 2)) ? '58' : '30',
                  'ram:PayeePartyCreditorFinancialAccount': { 'ram:IBANID': seller.iban },
                  ...(seller.bic ? { 'ram:PayeeSpecifiedCreditorFinancialInstitution': { 'ram:BICID': seller.bic } } : {}),
                },
              }
            : {}),
          'ram:ApplicableTradeTax': inv.breakdown.map((b) => ({
            'ram:CalculatedAmount': amount(b.tax),
            'ram:TypeCode': 'VAT',
            ...(EXEMPT.includes(b.vat.category) && inv.exemptionReason ? { 'ram:ExemptionReason': inv.exemptionReason } : {}),
            'ram:BasisAmount': amount(b.basis),
            'ram:CategoryCode': b.vat.category,
            ...(b.vat.percent ? { 'ram:RateApplicablePercent': amount(b.vat.percent) } : {}),
          })),
          ...(inv.discount
            ? {
                'ram:SpecifiedTradeAllowanceCharge': {
                  'ram:ChargeIndicator': { 'udt:Indicator': 'false' },
                  'ram:ActualAmount': amount(inv.discount.amount),
                  'ram:Reason': inv.discount.reason,
                  'ram:CategoryTradeTax': tax(inv.discount.vat),
                },
              }
            : {}),
          ...(inv.paymentTerms || inv.dueDate
            ? {
                'ram:SpecifiedTradePaymentTerms': {
                  ...(inv.paymentTerms ? { 'ram:Description': inv.paymentTerms } : {}),
                  ...(inv.dueDate ? { 'ram:DueDateDateTime': dateTime(inv.dueDate) } : {}),
                },
              }
            : {}),
          'ram:SpecifiedTradeSettlementHeaderMonetarySummation': {
            'ram:LineTotalAmount': amount(totals.lines),
            ...(inv.discount ? { 'ram:AllowanceTotalAmount': amount(totals.allowances) } : {}),
            'ram:TaxBasisTotalAmount': amount(totals.taxBasis),
            'ram:TaxTotalAmount': { '@_currencyID': inv.currency, '#text': amount(totals.tax) },
            'ram:GrandTotalAmount': amount(totals.grand),
            ...(totals.paid.isZero() ? {} : { 'ram:TotalPrepaidAmount': amount(totals.paid) }),
            'ram:DuePayableAmount': amount(totals.due),
          },
        },
      },
    },
  };
  return new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ', suppressEmptyNode: true }).build(doc) as string;
}

/** The countries of the SEPA scheme (an IBAN from them is paid by SEPA credit transfer). */
const SEPA = new Set(
  'AD AT BE BG CH CY CZ DE DK EE ES FI FR GB GI GR HR HU IE IS IT LI LT LU LV MC MT NL NO PL PT RO SE SI SK SM VA'.split(' '),
);
