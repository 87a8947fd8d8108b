/**
 * The part of exceljs 4.4.0's own utilities that xlsx-cells.ts uses (the module ships no types): the rule by which
 * its reader takes a number cell for a date, applied to formula results too, so both follow one rule.
 */
declare module 'exceljs/lib/utils/utils.js' {
  const utils: {
    isDateFmt(format: string | undefined): boolean;
    excelToDate(serial: number, date1904?: boolean): Date;
  };
  export default utils;
}
