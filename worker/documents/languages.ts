// The languages scans are read in: tesseract's data for each ships with the app (English precached,
// the others fetched on first use and then kept for offline). "auto" reads a page in English
// first and, when that text is plainly another supported language, reads it again in that one.
import { OCR_LANGUAGES } from '../../protocol/documents.ts';

export { OCR_LANGUAGES } from '../../protocol/documents.ts';

export type OcrLanguage = keyof typeof OCR_LANGUAGES;
export type OcrLanguageChoice = import('../../protocol/documents.ts').OcrLanguageChoice;

export function isOcrLanguage(value: unknown): value is OcrLanguage {
  return typeof value === 'string' && Object.hasOwn(OCR_LANGUAGES, value);
}

/**
 * Words that mark a language on invoices and letters (function words, and the words invoices
 * are made of), matched whole and lower-cased. English reads the others' letters without their
 * accents (Müller as Miiller), so these are chosen to survive that.
 */
const MARKERS: Record<Exclude<OcrLanguage, 'eng'>, string[]> = {
  deu: ['und', 'der', 'die', 'das', 'mit', 'für', 'fur', 'rechnung', 'rechnungsnummer', 'datum', 'betrag', 'summe', 'gesamt', 'mwst', 'ust', 'netto', 'brutto', 'menge', 'einzelpreis', 'bitte', 'zahlbar', 'gmbh', 'stück', 'stuck', 'leistung', 'zwischensumme'],
  fra: ['et', 'le', 'la', 'les', 'des', 'du', 'pour', 'avec', 'facture', 'montant', 'total', 'tva', 'ht', 'ttc', 'date', 'quantité', 'quantite', 'prix', 'unitaire', 'sarl', 'payer', 'échéance', 'echeance'],
  spa: ['y', 'el', 'la', 'los', 'las', 'de', 'del', 'para', 'con', 'factura', 'importe', 'total', 'iva', 'fecha', 'cantidad', 'precio', 'unitario', 'base', 'imponible', 'pagar'],
  ita: ['e', 'il', 'lo', 'la', 'gli', 'di', 'del', 'della', 'per', 'con', 'fattura', 'importo', 'totale', 'iva', 'data', 'quantità', 'quantita', 'prezzo', 'imponibile', 'srl', 'pagamento'],
  por: ['e', 'o', 'a', 'os', 'as', 'de', 'do', 'da', 'para', 'com', 'fatura', 'factura', 'valor', 'total', 'iva', 'data', 'quantidade', 'preço', 'preco', 'unitário', 'unitario', 'lda', 'pagamento'],
  nld: ['en', 'de', 'het', 'een', 'van', 'voor', 'met', 'factuur', 'factuurnummer', 'bedrag', 'totaal', 'btw', 'datum', 'aantal', 'prijs', 'subtotaal', 'betalen', 'bv'],
};

const ENGLISH = ['and', 'the', 'of', 'for', 'with', 'invoice', 'amount', 'total', 'tax', 'date', 'quantity', 'price', 'subtotal', 'due', 'payment', 'gst', 'vat', 'number', 'bill', 'to'];

/**
 * The language a page's text (read in English) is plainly in, or null when it reads as English or
 * too little to tell. Scores each language by its marker words; another language wins when it
 * beats English clearly and has a few words of its own that English does not share.
 */
export function detectLanguage(text: string): OcrLanguage | null {
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 8) return null;
  const count = (markers: string[]) => {
    const set = new Set(markers);
    return words.filter((word) => set.has(word)).length;
  };
  const english = count(ENGLISH);
  let best: { language: OcrLanguage; score: number } | null = null;
  for (const [language, markers] of Object.entries(MARKERS) as [Exclude<OcrLanguage, 'eng'>, string[]][]) {
    const own = markers.filter((marker) => !ENGLISH.includes(marker));
    const score = count(own);
    if (!best || score > best.score) best = { language, score };
  }
  return best && best.score >= 3 && best.score > english ? best.language : null;
}

/** The tesseract language string for a page: the chosen language, with English beside it (names, codes and amounts often are). */
export function tesseractLanguages(language: OcrLanguage): string {
  return language === 'eng' ? 'eng' : `${language}+eng`;
}
