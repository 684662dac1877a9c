// A long scanned PDF made from the fixture scans: letter-like pages, each a scan at 150 dpi and
// no text layer, as an office scanner makes of a stack of invoices. For the e2e test and the
// benchmark of long documents.
import { PDFDocument } from 'pdf-lib';
import { fixture, invoices } from './fixtures.ts';

/** `pages` pages, every non-receipt fixture scan in turn. */
export async function longScannedPdf(pages: number): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const scans = invoices().filter((entry) => entry.layout !== 'receipt');
  for (let n = 0; n < pages; n++) {
    const image = await pdf.embedJpg(fixture(scans[n % scans.length]!.files.scan));
    const [width, height] = [(image.width * 72) / 150, (image.height * 72) / 150];
    pdf.addPage([width, height]).drawImage(image, { x: 0, y: 0, width, height });
  }
  return Buffer.from(await pdf.save());
}
