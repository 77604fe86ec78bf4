/**
 * Judged queries for the stored-source lookups, written from the sample data in `exporter/data/`:
 * what a person typing the keywords is looking for, and the rows that answer it. `relevant` holds
 * every row that answers it equally (two editions of the same book, a company's share classes);
 * `key` is the result field that identifies a row. The set was written before looking at the
 * ranking's output; `relevance.test.ts` computes the mean reciprocal rank over it.
 */
export interface Judgement {
  readonly keywords: string;
  readonly relevant: readonly (string | number)[];
}

export interface JudgedSource {
  readonly key: string;
  readonly queries: readonly Judgement[];
}

export const JUDGEMENTS: Readonly<Record<'gutenberg' | 'census' | 'food' | 'pwc' | 'sec', JudgedSource>> = {
  gutenberg: {
    key: 'text_id',
    queries: [
      { keywords: 'the art of war', relevant: [132] },
      { keywords: 'scarlet letter', relevant: [33] },
      { keywords: 'anne of green gables', relevant: [45] },
      { keywords: 'communist manifesto marx', relevant: [61] },
      { keywords: 'tarzan return', relevant: [81] },
      { keywords: 'flatland', relevant: [97, 201] },
      { keywords: 'secret garden', relevant: [113] },
      { keywords: 'middlemarch', relevant: [145] },
      { keywords: 'call of the wild', relevant: [215] },
      { keywords: 'heart of darkness conrad', relevant: [219, 526] },
      { keywords: 'hunting of the snark', relevant: [13] },
      { keywords: 'sleepy hollow', relevant: [41] },
      { keywords: "uncle tom's cabin", relevant: [203] },
      { keywords: 'pride and prejudice', relevant: [1342] },
      { keywords: 'frankenstein', relevant: [84] },
      { keywords: 'moby dick', relevant: [15, 2489, 2701] },
      { keywords: 'treasure island', relevant: [120] },
      { keywords: 'austen persuasion', relevant: [105] },
    ],
  },
  census: {
    key: 'name',
    queries: [
      { keywords: 'texas', relevant: ['Texas'] },
      { keywords: 'california', relevant: ['California'] },
      { keywords: 'los angeles', relevant: ['Los Angeles County, California'] },
      { keywords: 'cook county illinois', relevant: ['Cook County, Illinois'] },
      { keywords: 'doña ana', relevant: ['Doña Ana County, New Mexico'] },
      { keywords: 'dona ana', relevant: ['Doña Ana County, New Mexico'] },
      { keywords: 'harris texas', relevant: ['Harris County, Texas'] },
      { keywords: 'new york', relevant: ['New York'] },
      { keywords: 'king county washington', relevant: ['King County, Washington'] },
      { keywords: 'miami-dade', relevant: ['Miami-Dade County, Florida'] },
      { keywords: 'puerto rico', relevant: ['Puerto Rico'] },
      { keywords: 'midwest region', relevant: ['Midwest Region'] },
    ],
  },
  food: {
    key: 'fdc_id',
    queries: [
      { keywords: 'butter salted', relevant: [9001001] },
      { keywords: 'apples raw', relevant: [9009003] },
      { keywords: 'carrots raw', relevant: [9011124] },
      { keywords: 'chicken breast raw', relevant: [9005062] },
      { keywords: 'atlantic salmon', relevant: [9015237] },
      { keywords: 'smooth peanut butter', relevant: [9016398] },
      { keywords: 'avocado raw', relevant: [9009037, 9009039] },
      { keywords: 'fried tofu', relevant: [9016129] },
      { keywords: 'long grain white rice raw', relevant: [9020444] },
      { keywords: 'espresso', relevant: [9014210] },
      { keywords: 'instant oats', relevant: [9008122, 9008128] },
      { keywords: 'mozzarella whole milk', relevant: [9001026] },
      { keywords: 'ground beef 80% lean raw', relevant: [9023572] },
      { keywords: 'plain yogurt whole milk', relevant: [9001116] },
    ],
  },
  pwc: {
    key: 'arxiv_id',
    queries: [
      { keywords: 'attention is all you need', relevant: ['1706.03762'] },
      { keywords: 'sequence transduction translation', relevant: ['1706.03762'] },
      { keywords: 'deep residual learning', relevant: ['1512.03385'] },
      { keywords: 'bert', relevant: ['1810.04805'] },
      { keywords: 'adam stochastic optimization', relevant: ['1412.6980'] },
      { keywords: 'generative adversarial networks', relevant: ['1406.2661'] },
      { keywords: 'biomedical image segmentation', relevant: ['1505.04597'] },
      { keywords: 'real-time object detection', relevant: ['1506.02640'] },
      { keywords: 'few-shot learners', relevant: ['2005.14165'] },
      { keywords: 'goodfellow', relevant: ['1406.2661'] },
      { keywords: 'kaiming he', relevant: ['1512.03385'] },
      { keywords: '1505.04597', relevant: ['1505.04597'] },
    ],
  },
  sec: {
    key: 'ticker',
    queries: [
      { keywords: 'nvidia', relevant: ['NVDA'] },
      { keywords: 'alphabet', relevant: ['GOOGL', 'GOOG'] },
      { keywords: 'berkshire hathaway', relevant: ['BRK-B', 'BRK-A'] },
      { keywords: 'microsoft', relevant: ['MSFT'] },
      { keywords: 'jpmorgan chase', relevant: ['JPM'] },
      { keywords: 'coca cola', relevant: ['KO'] },
      { keywords: 'walmart', relevant: ['WMT'] },
      { keywords: 'exxon mobil', relevant: ['XOM'] },
      { keywords: 'johnson & johnson', relevant: ['JNJ'] },
      { keywords: 'netflix', relevant: ['NFLX'] },
      { keywords: 'goldman sachs', relevant: ['GS'] },
      { keywords: 'disney', relevant: ['DIS'] },
      { keywords: 'tsla', relevant: ['TSLA'] },
      { keywords: 'apple inc', relevant: ['AAPL'] },
    ],
  },
};
