/** The package ships no types: a CommonJS module that is one function, a word in, its Porter2 (English Snowball) stem out. */
declare module 'wink-porter2-stemmer' {
  function stem(word: string): string;
  export = stem;
}
