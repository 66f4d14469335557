import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { facturxXml, invoiceFromVariables } from '../../../domain/documents/facturx';
import { AppError } from '../../../domain/errors';

// The XSD validation of these invoices is in tests/integration/documents/pdfa.test.ts (unit tests run no other program).

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, removeNSPrefix: true, parseTagValue: false }).parse(xml).CrossIndustryInvoice;

/** The invoice example's variables as a render resolves them: its constants and calculated values, float residue included. */
function exampleVariables() {
  const example = JSON.parse(readFileSync(join(__dirname, '../../../docs/examples/invoice.json'), 'utf8'));
  const data = { ...example.sampleData, ...example.definition.constants } as Record<string, any>;
  const priced = data.lines.map((l: any) => ({ ...l, amount: l.qty * l.unitPrice }));
  const subtotal = priced.reduce((a: number, l: any) => a + l.amount, 0) - data.discount;
  const vat = Math.round(subtotal * data.vatRate * 100) / 100;
  return { ...data, issuedOn: new Date(`${data.issuedOn}T00:00:00Z`), pricedLines: priced, subtotal, vat, total: subtotal + vat };
}

function problemsOf(variables: Record<string, unknown>): Array<{ path: string; message: string }> {
  try {
    invoiceFromVariables(variables);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('ERR_OUTPUT_002');
    return ((err as AppError).relatedInfo as { errors: Array<{ path: string; message: string }> }).errors;
  }
  throw new Error('expected ERR_OUTPUT_002');
}

describe('the Factur-X mapping (domain/documents/facturx.ts)', () => {
  it('makes the invoice example an EN 16931 invoice, totals computed to the cent', () => {
    const vars = exampleVariables();
    // The page's own total is a float sum; the XML's is decimal and agrees with it to the cent.
    expect(vars.total).toBeCloseTo(1428, 9);
    const xml = facturxXml(invoiceFromVariables(vars));
    const inv = parse(xml);
    expect(inv.ExchangedDocument).toMatchObject({ ID: 'INV-2026-014', TypeCode: '380', IssueDateTime: { DateTimeString: { '#text': '20261128', '@_format': '102' } } });
    const tx = inv.SupplyChainTradeTransaction;
    expect(tx.IncludedSupplyChainTradeLineItem.map((l: any) => [l.SpecifiedTradeProduct.Name, l.SpecifiedLineTradeDelivery.BilledQuantity['#text'], l.SpecifiedLineTradeAgreement.NetPriceProductTradePrice.ChargeAmount, l.SpecifiedLineTradeSettlement.SpecifiedTradeSettlementLineMonetarySummation.LineTotalAmount])).toEqual([
      ['Template design', '1.00', '900.00', '900.00'],
      ['Batch rendering, 2,000 documents', '2000.00', '0.17', '340.00'],
    ]);
    expect(tx.ApplicableHeaderTradeAgreement.SellerTradeParty).toMatchObject({ Name: 'Formwork GmbH', PostalTradeAddress: { CountryID: 'DE' }, SpecifiedTaxRegistration: { ID: { '#text': 'DE123456789', '@_schemeID': 'VA' } } });
    expect(tx.ApplicableHeaderTradeAgreement.BuyerTradeParty).toMatchObject({ Name: 'Ada Lovelace', PostalTradeAddress: { CountryID: 'GB' } });
    const settlement = tx.ApplicableHeaderTradeSettlement;
    expect(settlement.InvoiceCurrencyCode).toBe('EUR');
    expect(settlement.SpecifiedTradeSettlementPaymentMeans).toEqual({ TypeCode: '58', PayeePartyCreditorFinancialAccount: { IBANID: 'DE89370400440532013000' } });
    expect(settlement.SpecifiedTradeAllowanceCharge).toMatchObject({ ActualAmount: '40.00', CategoryTradeTax: { CategoryCode: 'S', RateApplicablePercent: '19.00' } });
    expect(settlement.ApplicableTradeTax).toMatchObject({ CalculatedAmount: '228.00', BasisAmount: '1200.00', CategoryCode: 'S', RateApplicablePercent: '19.00' });
    expect(settlement.SpecifiedTradePaymentTerms.DueDateDateTime.DateTimeString['#text']).toBe('20261212');
    expect(settlement.SpecifiedTradeSettlementHeaderMonetarySummation).toEqual({
      LineTotalAmount: '1240.00',
      AllowanceTotalAmount: '40.00',
      TaxBasisTotalAmount: '1200.00',
      TaxTotalAmount: { '#text': '228.00', '@_currencyID': 'EUR' },
      GrandTotalAmount: '1428.00',
      DuePayableAmount: '1428.00',
    });
  });

  it('rounds half away from zero on the decimal value, not the binary one, and groups VAT per category and rate', () => {
    const xml = facturxXml(
      invoiceFromVariables({
        invoiceNumber: 'R-1',
        issueDate: '2026-01-31',
        currency: 'EUR',
        paymentTerms: 'Net 30 days',
        seller: { name: 'S', country: 'de', vatId: 'DE 123 456 789', street: 'Weg 1', postcode: '10115', city: 'Berlin' },
        customer: { name: 'B & <Co>', country: 'FR' },
        vatPercent: 19,
        items: [
          // 0.1 × 3 is 0.30000000000000004 in binary; 1.005 is 1.00499999999999989… in binary, 1.01 rounded as written.
          { name: 'Three dimes', quantity: 3, price: 0.1 },
          { name: 'Rounding', quantity: '1', price: '1.005' },
          { name: 'Book', quantity: 2, price: 12.5, vatPercent: 7 },
          { name: 'Fractional', quantity: 1.5, price: 0.3333 },
        ],
      }),
    );
    const tx = parse(xml).SupplyChainTradeTransaction;
    const amounts = tx.IncludedSupplyChainTradeLineItem.map((l: any) => l.SpecifiedLineTradeSettlement.SpecifiedTradeSettlementLineMonetarySummation.LineTotalAmount);
    expect(amounts).toEqual(['0.30', '1.01', '25.00', '0.50']);
    expect(tx.IncludedSupplyChainTradeLineItem[3].SpecifiedLineTradeAgreement.NetPriceProductTradePrice.ChargeAmount).toBe('0.3333');
    expect(tx.ApplicableHeaderTradeAgreement.BuyerTradeParty.Name).toBe('B & <Co>');
    expect(xml).toContain('B &amp; &lt;Co&gt;');
    const taxes = tx.ApplicableHeaderTradeSettlement.ApplicableTradeTax.map((t: any) => [t.CategoryCode, t.RateApplicablePercent, t.BasisAmount, t.CalculatedAmount]);
    // 19 %: 0.30 + 1.01 + 0.50 = 1.81 → 0.3439 → 0.34; 7 %: 25.00 → 1.75.
    expect(taxes).toEqual([
      ['S', '19.00', '1.81', '0.34'],
      ['S', '7.00', '25.00', '1.75'],
    ]);
    expect(tx.ApplicableHeaderTradeSettlement.SpecifiedTradeSettlementHeaderMonetarySummation).toMatchObject({ LineTotalAmount: '26.81', TaxBasisTotalAmount: '26.81', GrandTotalAmount: '28.90', DuePayableAmount: '28.90' });
    expect(tx.ApplicableHeaderTradeSettlement.SpecifiedTradePaymentTerms.Description).toBe('Net 30 days');
  });

  it('writes exempt and reverse-charge invoices with their reason, and amounts already paid', () => {
    const inv = invoiceFromVariables({
      number: 'RC-1',
      issuedOn: '2026-02-01',
      dueOn: '2026-03-01',
      currency: 'EUR',
      seller: { name: 'S', country: 'DE', vatId: 'DE123456789' },
      buyer: { name: 'B', country: 'FR', vatId: 'FR12345678901' },
      vatCategory: 'AE',
      vatRate: 0,
      vatExemptionReason: 'Reverse charge',
      paidAmount: 10,
      lines: [{ description: 'Service', qty: 1, unitPrice: 100 }],
    });
    const xml = facturxXml(inv);
    const settlement = parse(xml).SupplyChainTradeTransaction.ApplicableHeaderTradeSettlement;
    expect(settlement.ApplicableTradeTax).toMatchObject({ CategoryCode: 'AE', ExemptionReason: 'Reverse charge', CalculatedAmount: '0.00', BasisAmount: '100.00' });
    expect(settlement.SpecifiedTradeSettlementHeaderMonetarySummation).toMatchObject({ GrandTotalAmount: '100.00', TotalPrepaidAmount: '10.00', DuePayableAmount: '90.00' });
  });

  it('lists every missing or wrong field with its variable path (ERR_OUTPUT_002)', () => {
    const problems = problemsOf({
      issuedOn: 'tomorrow',
      seller: { name: 'S', address: 'Somewhere' },
      buyer: 'Ada',
      vatRate: 0.19,
      lines: [{ description: 'A', qty: 1 }, { qty: 'two', unitPrice: -1 }, 7],
    });
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining(['invoiceNumber', 'issuedOn', 'currency', 'seller.country', 'buyer', 'lines[0].unitPrice', 'lines[1].description', 'lines[1].qty', 'lines[1].unitPrice', 'lines[2]']),
    );
    expect(problems.find((p) => p.path === 'invoiceNumber')!.message).toMatch(/BT-1.*`invoiceNumber` or `number`/);
    expect(problems.find((p) => p.path === 'seller.country')!.message).toMatch(/BT-40/);
    // Nothing at all: each required part named once.
    expect(problemsOf({}).map((p) => p.path)).toEqual(['invoiceNumber', 'issueDate', 'currency', 'seller', 'buyer', 'lines']);
  });

  const valid = () => ({
    number: 'A-1',
    issuedOn: '2026-01-01',
    dueOn: '2026-02-01',
    currency: 'EUR',
    seller: { name: 'S', country: 'DE', vatId: 'DE1' },
    buyer: { name: 'B', country: 'DE' },
    vatRate: 0.19,
    lines: [{ description: 'A', qty: 3, unitPrice: 0.1 }],
  });

  it('drops characters XML cannot carry, and cuts a long list of problems', () => {
    const xml = facturxXml(invoiceFromVariables({ ...valid(), buyer: { name: 'B\u0000\u001b Ltd\uD800', country: 'DE' } }));
    expect(parse(xml).SupplyChainTradeTransaction.ApplicableHeaderTradeAgreement.BuyerTradeParty.Name).toBe('B Ltd');
    let message = '';
    let errors: unknown[] = [];
    try {
      invoiceFromVariables({ ...valid(), lines: Array.from({ length: 500 }, () => ({ description: 'A' })) });
    } catch (err) {
      message = (err as AppError).message;
      errors = ((err as AppError).relatedInfo as { errors: unknown[] }).errors;
    }
    expect(errors).toHaveLength(50);
    expect(message).toContain('and 990 more');
  });

  it('refuses a printed total, VAT or line amount that differs from the lines, so the page and the XML agree', () => {
    expect(() => invoiceFromVariables({ ...valid(), total: 0.36, vat: 0.06 })).not.toThrow();
    expect(problemsOf({ ...valid(), total: 0.3 }).map((p) => p.path)).toEqual(['total']);
    expect(problemsOf({ ...valid(), vatAmount: 0.05 })[0]).toMatchObject({ path: 'vatAmount', message: expect.stringContaining('0.06') });
    expect(problemsOf({ ...valid(), lines: [{ description: 'A', qty: 3, unitPrice: 0.1, amount: 0.31 }] })[0].path).toBe('lines[0].amount');
  });

  it('follows the EN 16931 rules a mapping can break: VAT categories and rates, due date or terms, seller identifiers', () => {
    expect(problemsOf({ ...valid(), vatRate: 0 })[0]).toMatchObject({ path: 'vatCategory', message: expect.stringContaining('category') });
    expect(problemsOf({ ...valid(), vatRate: undefined })[0].path).toBe('lines[0].vatRate');
    expect(problemsOf({ ...valid(), vatRate: 0, vatCategory: 'E' })[0].path).toBe('vatExemptionReason');
    expect(problemsOf({ ...valid(), vatCategory: 'Z' })[0].message).toContain('rate of 0');
    expect(problemsOf({ ...valid(), vatCategory: 'XX' })[0].path).toBe('vatCategory');
    expect(problemsOf({ ...valid(), dueOn: undefined })[0].message).toContain('BR-CO-25');
    expect(problemsOf({ ...valid(), seller: { name: 'S', country: 'DE' } }).map((p) => p.path)).toContain('seller.vatId');
    expect(problemsOf({ ...valid(), vatRate: 0, vatCategory: 'AE', vatExemptionReason: 'RC' }).map((p) => p.path)).toEqual(['buyer.vatId']);
    expect(problemsOf({ ...valid(), invoiceTypeCode: '999' })[0].path).toBe('invoiceTypeCode');
    expect(problemsOf({ ...valid(), seller: { ...valid().seller, iban: 'not an iban' } })[0].path).toBe('seller.iban');
    expect(problemsOf({ ...valid(), lines: [] })[0].path).toBe('lines');
  });
});
