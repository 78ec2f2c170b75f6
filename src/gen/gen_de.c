/* gen_de.c: toy-de, an English -> German-like grammar for long-distance reordering:
 * verb second after a fronted adverb ("today the man reads the book" -> "heute liest
 * der Mann das Buch"), separable verbs whose particle goes to the end ("picks up the
 * book" -> "hebt das Buch auf"), verb-final subordinate clauses ("... that the man
 * picks up the book" -> "..., dass der Mann das Buch aufhebt"), compounds (many-to-one:
 * "the house door" -> "die Haustür"), and gender and case on articles (der/die/das,
 * den in the accusative). Every English sentence has exactly one translation. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

enum { MASC, FEM, NEUT };

typedef struct {
    const char *en, *en_pl, *de, *de_pl;
    int gender;
} Noun;

static const Noun NOUNS[] = {
    {"man", "men", "Mann", "Männer", MASC}, {"dog", "dogs", "Hund", "Hunde", MASC},
    {"friend", "friends", "Freund", "Freunde", MASC}, {"teacher", "teachers", "Lehrer", "Lehrer", MASC},
    {"table", "tables", "Tisch", "Tische", MASC}, {"garden", "gardens", "Garten", "Gärten", MASC},
    {"key", "keys", "Schlüssel", "Schlüssel", MASC}, {"letter", "letters", "Brief", "Briefe", MASC},
    {"chair", "chairs", "Stuhl", "Stühle", MASC}, {"apple", "apples", "Apfel", "Äpfel", MASC},
    {"woman", "women", "Frau", "Frauen", FEM}, {"door", "doors", "Tür", "Türen", FEM},
    {"cat", "cats", "Katze", "Katzen", FEM}, {"street", "streets", "Straße", "Straßen", FEM},
    {"lamp", "lamps", "Lampe", "Lampen", FEM}, {"city", "cities", "Stadt", "Städte", FEM},
    {"flower", "flowers", "Blume", "Blumen", FEM}, {"bottle", "bottles", "Flasche", "Flaschen", FEM},
    {"book", "books", "Buch", "Bücher", NEUT}, {"house", "houses", "Haus", "Häuser", NEUT},
    {"child", "children", "Kind", "Kinder", NEUT}, {"window", "windows", "Fenster", "Fenster", NEUT},
    {"picture", "pictures", "Bild", "Bilder", NEUT}, {"glass", "glasses", "Glas", "Gläser", NEUT},
};

/* Compounds "MOD HEAD" -> Mod + head: the modifier's compound stem, then the head
 * noun in lower case; gender and plural come from the head. */
static const struct {
    const char *en, *stem;
} MODIFIERS[] = {{"house", "Haus"}, {"car", "Auto"}, {"garden", "Garten"}, {"kitchen", "Küchen"},
                 {"school", "Schul"}, {"office", "Büro"}};
static const char *const HEADS[] = {"door", "key", "table", "chair", "lamp", "window", "picture", "glass"};

static int noun_index(const char *en)
{
    int k = 0;
    while (strcmp(NOUNS[k].en, en))
        k++;
    return k;
}

typedef struct {
    const char *en, *en_3sg, *particle_en; /* "picks" "up" */
    const char *de_1sg, *de_3sg, *de_pl, *particle; /* separable particle, or NULL */
} Verb;

static const Verb VERBS[] = {
    {"see", "sees", NULL, "sehe", "sieht", "sehen", NULL},
    {"read", "reads", NULL, "lese", "liest", "lesen", NULL},
    {"buy", "buys", NULL, "kaufe", "kauft", "kaufen", NULL},
    {"find", "finds", NULL, "finde", "findet", "finden", NULL},
    {"open", "opens", NULL, "öffne", "öffnet", "öffnen", NULL},
    {"paint", "paints", NULL, "male", "malt", "malen", NULL},
    {"carry", "carries", NULL, "trage", "trägt", "tragen", NULL},
    {"wash", "washes", NULL, "wasche", "wäscht", "waschen", NULL},
    {"visit", "visits", NULL, "besuche", "besucht", "besuchen", NULL},
    {"need", "needs", NULL, "brauche", "braucht", "brauchen", NULL},
    {"pick", "picks", "up", "hebe", "hebt", "heben", "auf"},
    {"call", "calls", "up", "rufe", "ruft", "rufen", "an"},
    {"bring", "brings", "along", "bringe", "bringt", "bringen", "mit"},
    {"throw", "throws", "away", "werfe", "wirft", "werfen", "weg"},
    {"switch", "switches", "on", "schalte", "schaltet", "schalten", "ein"},
    {"close", "closes", NULL, "mache", "macht", "machen", "zu"}, /* one English word, two German */
};

/* Subject pronouns with their verb form: 0 = 1sg, 1 = 3sg, 2 = plural. */
static const struct {
    const char *en, *de;
    int form;
} PRONOUNS[] = {{"I", "ich", 0}, {"he", "er", 1}, {"she", "sie", 1}, {"we", "wir", 2}, {"they", "sie", 2}};

static const struct {
    const char *en, *de;
} ADVERBS[] = {{"today", "heute"}, {"tomorrow", "morgen"}, {"now", "jetzt"}, {"here", "hier"}};

/* The clause that embeds a subordinate one: "I know that" -> "ich weiß , dass". */
static const struct {
    const char *en_subject, *en_verb, *de_subject, *de_verb;
} MATRIX[] = {{"I", "know", "ich", "weiß"}, {"she", "says", "sie", "sagt"},
              {"we", "think", "wir", "denken"}, {"he", "hopes", "er", "hofft"}};

#define PICK(rng, table) ((int)pcg32_below(rng, sizeof table / sizeof *table))

typedef struct {
    int noun, plural, definite, compound_mod; /* compound_mod: -1 or index in MODIFIERS */
    int e_det, e_mod, e_noun;
} NP;

static void draw_np(NP *np, Pcg32 *rng)
{
    memset(np, 0, sizeof *np);
    np->compound_mod = pcg32_below(rng, 5) == 0 ? PICK(rng, MODIFIERS) : -1;
    np->noun = np->compound_mod >= 0 ? noun_index(HEADS[PICK(rng, HEADS)]) : PICK(rng, NOUNS);
    np->plural = pcg32_below(rng, 4) == 0;
    np->definite = np->plural || pcg32_below(rng, 3) != 0;
}

static void en_np(GenPair *p, NP *np)
{
    const char *det = np->definite ? "the" : "a";
    const char *next = np->compound_mod >= 0 ? MODIFIERS[np->compound_mod].en : NOUNS[np->noun].en;
    if (!np->definite && strchr("aeiou", next[0]))
        det = "an";
    np->e_det = gen_src(p, det);
    if (np->compound_mod >= 0)
        np->e_mod = gen_src(p, MODIFIERS[np->compound_mod].en);
    np->e_noun = gen_src(p, np->plural ? NOUNS[np->noun].en_pl : NOUNS[np->noun].en);
}

static void de_np(GenPair *p, const NP *np, int accusative)
{
    static const char *const DEFINITE[2][3] = {{"der", "die", "das"}, {"den", "die", "das"}};
    static const char *const INDEFINITE[2][3] = {{"ein", "eine", "ein"}, {"einen", "eine", "ein"}};
    int g = NOUNS[np->noun].gender;
    const char *det = np->plural ? "die" : np->definite ? DEFINITE[accusative][g] : INDEFINITE[accusative][g];
    gen_link(p, np->e_det, gen_tgt(p, det));
    const char *noun = np->plural ? NOUNS[np->noun].de_pl : NOUNS[np->noun].de;
    if (np->compound_mod < 0) {
        gen_link(p, np->e_noun, gen_tgt(p, noun));
        return;
    }
    /* Haus + Tür -> Haustür: the modifier's stem, then the head with its (ASCII) first
     * letter in lower case */
    char word[GEN_TOKEN_BYTES];
    snprintf(word, sizeof word, "%s%c%s", MODIFIERS[np->compound_mod].stem, noun[0] - 'A' + 'a', noun + 1);
    int i = gen_tgt(p, word);
    gen_link(p, np->e_mod, i);
    gen_link(p, np->e_noun, i);
}

/* A clause: subject, verb, object; in German main order (verb second, particle last)
 * or subordinate order (verb last, particle joined to it). */
typedef struct {
    int subject_pronoun, verb;
    NP subject, object;
    int e_subject, e_verb, e_particle;
} Clause;

static void draw_clause(Clause *c, Pcg32 *rng)
{
    memset(c, 0, sizeof *c);
    c->subject_pronoun = pcg32_below(rng, 3) == 0 ? PICK(rng, PRONOUNS) : -1;
    c->verb = PICK(rng, VERBS);
    draw_np(&c->subject, rng);
    draw_np(&c->object, rng);
    c->e_particle = -1;
}

static int verb_form(const Clause *c)
{
    if (c->subject_pronoun >= 0)
        return PRONOUNS[c->subject_pronoun].form;
    return c->subject.plural ? 2 : 1;
}

static void en_clause(GenPair *p, Clause *c)
{
    if (c->subject_pronoun >= 0)
        c->e_subject = gen_src(p, PRONOUNS[c->subject_pronoun].en);
    else
        en_np(p, &c->subject);
    const Verb *v = &VERBS[c->verb];
    c->e_verb = gen_src(p, verb_form(c) == 1 ? v->en_3sg : v->en);
    if (v->particle_en)
        c->e_particle = gen_src(p, v->particle_en);
    en_np(p, &c->object);
}

static const char *de_form(const Clause *c)
{
    const Verb *v = &VERBS[c->verb];
    int f = verb_form(c);
    return f == 0 ? v->de_1sg : f == 1 ? v->de_3sg : v->de_pl;
}

static void de_subject(GenPair *p, const Clause *c)
{
    if (c->subject_pronoun >= 0)
        gen_link(p, c->e_subject, gen_tgt(p, PRONOUNS[c->subject_pronoun].de));
    else
        de_np(p, &c->subject, 0);
}

/* The finite verb; the particle of a separable verb links to its English particle
 * (or, for a one-word English verb like "closes", to the verb itself). */
static void link_verb(GenPair *p, const Clause *c, int i_verb, int i_particle)
{
    gen_link(p, c->e_verb, i_verb);
    if (i_particle >= 0)
        gen_link(p, c->e_particle >= 0 ? c->e_particle : c->e_verb, i_particle);
}

/* Main-clause order: [adverb] verb subject ... or subject verb ...; object; particle. */
static void de_main(GenPair *p, const Clause *c, int e_adverb, int adverb)
{
    int i_verb;
    if (adverb >= 0) {
        gen_link(p, e_adverb, gen_tgt(p, ADVERBS[adverb].de));
        i_verb = gen_tgt(p, de_form(c));
        de_subject(p, c);
    } else {
        de_subject(p, c);
        i_verb = gen_tgt(p, de_form(c));
    }
    de_np(p, &c->object, 1);
    int i_particle = VERBS[c->verb].particle ? gen_tgt(p, VERBS[c->verb].particle) : -1;
    link_verb(p, c, i_verb, i_particle);
}

/* Subordinate order: subject object verb, a particle joined in front of the verb. */
static void de_subordinate(GenPair *p, const Clause *c)
{
    de_subject(p, c);
    de_np(p, &c->object, 1);
    const Verb *v = &VERBS[c->verb];
    char joined[GEN_TOKEN_BYTES];
    snprintf(joined, sizeof joined, "%s%s", v->particle ? v->particle : "", de_form(c));
    int i = gen_tgt(p, joined);
    gen_link(p, c->e_verb, i);
    if (c->e_particle >= 0)
        gen_link(p, c->e_particle, i);
}

void gen_toy_de(GenPair *p, Pcg32 *rng)
{
    Clause main_clause, sub;
    draw_clause(&main_clause, rng);
    draw_clause(&sub, rng);
    uint32_t shape = pcg32_below(rng, 10);
    int adverb = pcg32_below(rng, 3) == 0 ? PICK(rng, ADVERBS) : -1;
    if (shape < 5) { /* [today] the man reads the book . */
        int e_adverb = adverb >= 0 ? gen_src(p, ADVERBS[adverb].en) : -1;
        en_clause(p, &main_clause);
        int e_stop = gen_src(p, ".");
        de_main(p, &main_clause, e_adverb, adverb);
        gen_link(p, e_stop, gen_tgt(p, "."));
    } else if (shape < 8) { /* I know that the man picks up the book . */
        int m = PICK(rng, MATRIX);
        int e_ms = gen_src(p, MATRIX[m].en_subject), e_mv = gen_src(p, MATRIX[m].en_verb);
        int e_that = gen_src(p, "that");
        en_clause(p, &sub);
        int e_stop = gen_src(p, ".");
        gen_link(p, e_ms, gen_tgt(p, MATRIX[m].de_subject));
        gen_link(p, e_mv, gen_tgt(p, MATRIX[m].de_verb));
        gen_tgt(p, ","); /* German's comma aligns with nothing */
        gen_link(p, e_that, gen_tgt(p, "dass"));
        de_subordinate(p, &sub);
        gen_link(p, e_stop, gen_tgt(p, "."));
    } else { /* the man reads the book because the woman buys an apple . */
        en_clause(p, &main_clause);
        int e_because = gen_src(p, "because");
        en_clause(p, &sub);
        int e_stop = gen_src(p, ".");
        de_main(p, &main_clause, -1, -1);
        gen_tgt(p, ",");
        gen_link(p, e_because, gen_tgt(p, "weil"));
        de_subordinate(p, &sub);
        gen_link(p, e_stop, gen_tgt(p, "."));
    }
}
