import { excelDateFormat, excelNumFmt, roundCurrency } from '../../../domain/templates/format';

describe('Excel formats follow the template', () => {
  it("writes the locale's medium date (what the PDF prints) as the date format", () => {
    expect(excelDateFormat({ locale: 'en-US', currency: 'USD' })).toBe('mmm d, yyyy');
    expect(excelDateFormat({ locale: 'de-DE', currency: 'EUR' })).toBe('dd.mm.yyyy');
    expect(excelDateFormat({ locale: 'en-GB', currency: 'GBP' })).toBe('d mmm yyyy');
    expect(excelNumFmt('date', { locale: 'de-DE', currency: 'EUR' })).toBe('dd.mm.yyyy');
  });

  it("rounds currency amounts to the currency's minor unit, and the format shows that many decimals", () => {
    expect(roundCurrency(22971.140000000003, { locale: 'en-US', currency: 'USD' })).toBe(22971.14);
    expect(roundCurrency(1.005, { locale: 'en-US', currency: 'USD' })).toBe(1.01);
    expect(roundCurrency(-2.675, { locale: 'en-US', currency: 'EUR' })).toBe(-2.68);
    expect(roundCurrency(1234.5, { locale: 'ja-JP', currency: 'JPY' })).toBe(1235);
    expect(roundCurrency(1.23456, { locale: 'en-US', currency: 'BHD' })).toBe(1.235);
    expect(excelNumFmt('currency', { locale: 'en-US', currency: 'USD' })).toBe('"$"#,##0.00;-"$"#,##0.00');
    expect(excelNumFmt('currency', { locale: 'ja-JP', currency: 'JPY' })).toBe('"￥"#,##0;-"￥"#,##0');
  });
});
