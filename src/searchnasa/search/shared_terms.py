"""The "shared terms" reason of a related paper: words and phrases both papers use that a reader
would pick to say what they have in common ("thermal barrier coatings", "yttria"), never filler
("except", "subjected", "results").

Three rules make a term worth showing:

- **Phrases first.** The longest runs of two to four words that both papers write in the same
  order, within one clause (a run never crosses punctuation: "coatings (EBCs)" is not a phrase).
  A phrase says more than its words apart, and overlapping pairs ("thermal barrier", "barrier
  coatings") become the one phrase both hold ("thermal barrier coatings").
- **No filler, anywhere.** :data:`STOP_WORDS` (function words) and :data:`FILLER` (the verbs,
  adverbs and hedges of scientific prose) are never part of a term. :data:`GENERIC` words
  ("system", "model", "test") may sit inside a phrase but are never shown alone.
- **Informative by IDF.** A lone word must be rare in the collection (in at most
  :data:`SINGLE_MAX_DF` of records) and not an adverb or past participle; a phrase needs one word
  in at most :data:`PHRASE_MAX_DF` that is not generic ("research center" says nothing). In a
  collection of technical reports "turbine" is common enough to say little alone, but "yttria"
  says a lot.

Words are compared by their stems (the index's analyzer), so "coatings" matches "coating"; the
seed's own wording is shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache

import tantivy

from searchnasa.index.schema import stem_tokens

MAX_TERMS = 3
MAX_PHRASE_WORDS = 4
SINGLE_MAX_DF = 0.02   # a lone word in more than 2% of records says little about two papers
PHRASE_MAX_DF = 0.10   # a phrase needs at least one word this rare

# Function words: the usual English stop lists (scikit-learn's among them) less their content words
# ("thin", "fire", "system", ...), which are in GENERIC, and their verbs, which are in FILLER.
STOP_WORDS = frozenset("""
a about above across after afterwards again against all almost alone along already also although
always am among amongst an and another any anyhow anyone anything anyway anywhere are around as at
be because been before beforehand behind being below beside besides between beyond both but by can
cannot cant co con could couldnt de did do does doing done down due during each eg eight either
eleven else elsewhere enough etc even ever every everyone everything everywhere except few fifteen
fifty first five for former formerly forty four from further had has hasnt have having he hence her
here hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in
inc indeed into is it its itself just last latter latterly least less ltd many may me meanwhile
might mine more moreover most mostly much must my myself namely neither never nevertheless next nine
no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others
otherwise our ours ourselves out over own per perhaps rather re same serious several she should
since sincere six sixty so some somehow someone something sometime sometimes somewhere still such
ten than that the their theirs them themselves then thence there thereafter thereby therefore
therein thereupon these they third this those though three through throughout thru thus to together
too toward towards twelve twenty two un under until up upon us very via was we well were what
whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever whether
which while whither who whoever whole whom whose why will with within without would yet you your
yours yourself yourselves et al vs cf ii iii iv also can't won't shall amoungst
""".split())

# The verbs, adverbs, adjectives and hedges of scientific prose: they say how a paper talks, not
# what it is about.
FILLER = frozenset("""
use used uses using usage based include includes included including present presents presented
presenting show shows shown showed showing describe describes described describing discuss discusses
discussed discussing report reports reported reporting study studies studied studying investigate
investigates investigated investigating investigation examine examines examined examining evaluate
evaluates evaluated evaluating evaluation determine determines determined determining observe observes
observed observing compare compares compared comparing comparison develop develops developed developing
development perform performs performed performing conduct conducts conducted conducting obtain obtains
obtained obtaining require requires required requiring expect expects expected indicate indicates
indicated indicating suggest suggests suggested suggesting propose proposes proposed proposing consider
considers considered considering provide provides provided providing achieve achieves achieved apply
applies applied applying make makes making give gives given giving find finds finding findings focus
focuses focused focusing subject subjects subjected subjecting follow follows followed following
result results resulting associate associated relate related relating increase increases increased
increasing decrease decreases decreased decreasing reduce reduces reduced reducing improve improves
improved improving allow allows allowed enable enables enabled involve involves involved involving
demonstrate demonstrates demonstrated demonstrating exhibit exhibits exhibited exhibiting occur occurs
occurred occurring appear appears appeared concern concerns concerned concerning regard regarding
significant significantly important importantly major minor various variety several different
differently similar similarly general generally specific specifically particular particularly certain
possible possibly potential potentially current currently recent recently previous previously present
total overall high higher highest low lower lowest large larger largest small smaller smallest new
newer old good better best great greater main mainly primary primarily simple simply typical typically
relatively respectively approximately nearly about roughly especially finally further furthermore
additionally addition additional moreover likely unlike little much many more most less least
number numbers type types form forms order level levels value values range ranges way ways means mean
area areas case cases example examples basis purpose purposes terms term respect aspect aspects
problem problems paper papers article work works effort efforts attempt attempts need needs needed
discussion conclusion conclusions summary overview introduction review reviewed reviews brief briefly
obtainable available availability able unable well good poor first second third one two three four
five ten hundred thousand etc ie eg fig figure figures table tables section sections page pages
find keep describe show made found call move fill get give go put see take cry seem seemed seeming
seems become became becomes becoming please confirm confirms confirmed confirming extend extends
extended extending enhance enhances enhanced establish establishes established identify identifies
identified identifying assess assesses assessed explore explores explored address addresses addressed
remain remains remained contain contains contained containing define defines defined novel useful
effective unique key basic common establishing lie lies lying sponsor sponsors sponsored sponsoring
contribute contributes contributed contributing practical scientific annual articles publication
publications participant participants government universities scheme schemes
""".split())

# Too general to say what two papers share on their own; fine inside a phrase ("control system").
GENERIC = frozenset("""
system systems model models modeling modelling method methods technique techniques approach
approaches analysis analyses analytical test tests testing tested data information process processes
processing effect effects change changes time times condition conditions property properties
parameter parameters factor factors rate rates design designs designed structure structures
structural performance application applications function functions behavior behaviour
characteristic characteristics measurement measurements measure measured experiment experiments
experimental theory theoretical calculation calculations calculated computation computational
program programs project projects research technology technologies operation operations material
materials component components unit units element elements region regions surface surfaces
temperature temperatures pressure pressures flow flows energy power field fields control controls
quality state states status level scale size sizes length mass volume loss losses
fire thin thick bill mill front bottom top side back full empty amount name interest detail part
discovery medium standard standards center centre laboratory laboratories institute university
department division office agency administration definition constant
""".split())

_CLAUSE_BREAK = re.compile(r"[.,;:!?()\[\]{}<>\"“”‘’/|=+*]+|\s[-–—]+\s|[–—]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")


@lru_cache(maxsize=65536)
def word_key(word: str) -> tuple[str, ...]:
    """The stems of a (possibly hyphenated) word: what two spellings must share to match."""
    return tuple(stem_tokens(word))


def clauses(text: str | None) -> list[list[str]]:
    """Lower-cased words, clause by clause (a term never spans punctuation)."""
    return [[w.lower() for w in _WORD.findall(part)] for part in _CLAUSE_BREAK.split(text or "")]


def in_a_term(word: str) -> bool:
    """Whether a word may be part of a shown term at all."""
    return len(word) >= 3 and word not in STOP_WORDS and word not in FILLER and not word.isdigit() \
        and not word.endswith("ly") and bool(word_key(word))


def shown_alone(word: str) -> bool:
    """Whether a word may be a term by itself: also not generic, nor a past participle."""
    return in_a_term(word) and word not in GENERIC and not word.endswith("ed")


class Rarity:
    """How rare a stem is in the collection (document frequency over titles and abstracts)."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self.searcher = searcher
        self.n_docs = max(1, searcher.num_docs)
        self._df: dict[str, int] = {}

    def df_ratio(self, word: str) -> float:
        """The share of records holding the word's most common stem (1.0 when it has none)."""
        stems = word_key(word)
        return max((self._stem_df(s) for s in stems), default=self.n_docs) / self.n_docs

    def idf(self, word: str) -> float:
        ratio = self.df_ratio(word)
        return math.log(1 + (1 - ratio + 0.5 / self.n_docs) / (ratio + 0.5 / self.n_docs))

    def _stem_df(self, stem: str) -> int:
        if stem not in self._df:
            self._df[stem] = max(self.searcher.doc_freq("abstract", stem), self.searcher.doc_freq("title", stem))
        return self._df[stem]


def _runs(seed: list[list[str]]) -> list[list[str]]:
    """Every run of term words in the seed's clauses (filler and stop words cut runs)."""
    out: list[list[str]] = []
    for clause in seed:
        run: list[str] = []
        for word in clause + [""]:
            if word and in_a_term(word):
                run.append(word)
            elif run:
                out.append(run)
                run = []
    return out


def _ngram_keys(text: list[list[str]], n_max: int) -> set[tuple[tuple[str, ...], ...]]:
    keys: set[tuple[tuple[str, ...], ...]] = set()
    for clause in text:
        ks = [word_key(w) for w in clause]
        for n in range(2, n_max + 1):
            keys.update(tuple(ks[i:i + n]) for i in range(len(ks) - n + 1))
    return keys


def shared_phrases(seed: list[list[str]], other: list[list[str]], rarity: Rarity) -> list[tuple[float, list[str]]]:
    """The longest word runs of the seed that ``other`` also writes, with their weight (sum of IDF)."""
    theirs = _ngram_keys(other, MAX_PHRASE_WORDS)
    found: dict[tuple[tuple[str, ...], ...], tuple[float, list[str]]] = {}
    for run in _runs(seed):
        i = 0
        while i < len(run) - 1:
            n = min(MAX_PHRASE_WORDS, len(run) - i)
            while n >= 2 and tuple(word_key(w) for w in run[i:i + n]) not in theirs:
                n -= 1
            if n < 2:
                i += 1
                continue
            words = run[i:i + n]
            if any(w not in GENERIC and rarity.df_ratio(w) <= PHRASE_MAX_DF for w in words):
                key = tuple(word_key(w) for w in words)
                found.setdefault(key, (sum(rarity.idf(w) for w in words), words))
            i += n - 1  # the next run may share this one's last word ("barrier coatings" + "coatings ebc")
    return sorted(found.values(), key=lambda t: -t[0])


def shared_terms(seed_texts: Sequence[str], other_text: str, rarity: Rarity, seed_title_words: set[str],
                 limit: int = MAX_TERMS) -> list[str]:
    """Up to ``limit`` terms: shared phrases by weight, then rare single words (title words first)."""
    seed = [c for t in seed_texts for c in clauses(t)]
    other = clauses(other_text)
    chosen: list[str] = []
    used: set[tuple[str, ...]] = set()
    for _, words in shared_phrases(seed, other, rarity):
        keys = [word_key(w) for w in words]
        if len(chosen) >= limit or all(k in used for k in keys):
            continue
        chosen.append(" ".join(words))
        used.update(keys)
    if len(chosen) < limit:
        theirs = {word_key(w) for clause in other for w in clause}
        singles: dict[tuple[str, ...], str] = {}
        for word in (w for clause in seed for w in clause):
            key = word_key(word)
            if key in theirs and key not in used and shown_alone(word) and rarity.df_ratio(word) <= SINGLE_MAX_DF:
                singles.setdefault(key, word)
        ranked = sorted(singles.values(), key=lambda w: (w not in seed_title_words, -rarity.idf(w)))
        chosen.extend(ranked[: limit - len(chosen)])
    return chosen
