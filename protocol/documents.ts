// The user's uploads (under documents/), the languages scans are read in, and the sample documents
// the build ships.

export interface DocumentInfo {
  id: string;
  filename: string;
  /** In user space, e.g. `documents/invoice.pdf` (the computer sees /workspace/documents/...). */
  path: string;
  mime: string;
  size: number;
  status: string;
  description: string;
  page_count: number | null;
  /** Why processing failed, in words for the user. */
  error: string | null;
}

export type OcrEngineChoice = 'local' | 'mistral';

/** The languages scans can be read in, by tesseract's names, as Settings lists them. */
export const OCR_LANGUAGES = {
  eng: 'English',
  deu: 'Deutsch',
  fra: 'Français',
  spa: 'Español',
  ita: 'Italiano',
  por: 'Português',
  nld: 'Nederlands',
} as const;

export type OcrLanguageChoice = 'auto' | keyof typeof OCR_LANGUAGES;

/**
 * The project's own sample documents, shipped in the build under `samples/` (vite.config.ts makes
 * them from its fixture generator): what the first run offers and the recorded demo reads.
 */
export const SAMPLE_DOCUMENTS = ['harbour-city-plumbing-invoice.pdf', 'northwind-logistics-invoice.pdf', 'daily-grind-receipt-scan.jpg'] as const;
