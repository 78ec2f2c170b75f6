/* gen_fr.c: toy-fr, an English -> French-like grammar with the phenomena attention was
 * invented for: gendered determiners and agreement (le/la/les, un/une, mon/ma/mes,
 * ce/cette/ces; adjectives agree), most adjectives after the noun and several of them
 * in mirror order ("the heavy green box" -> "la boîte verte lourde", like "European
 * Economic Area" -> "zone économique européenne"), object pronouns before the verb
 * ("I watch her" -> "je la regarde"), ne ... pas ("does not watch" -> "ne regarde pas":
 * not -> ne and not -> pas, do/does align with nothing), plurals, prepositional
 * phrases with contractions ("near the garden" -> "près du jardin"; "in front of" ->
 * "devant"), relative clauses with qui/que, and present-tense conjugation.
 * Every English sentence has exactly one translation. */
#include <stdio.h>
#include <string.h>

#include "gen/gen.h"

typedef struct {
    const char *en, *en_pl, *fr, *fr_pl;
    int fem;
} Noun;

static const Noun NOUNS[] = {
    {"cat", "cats", "chat", "chats", 0}, {"dog", "dogs", "chien", "chiens", 0},
    {"book", "books", "livre", "livres", 0}, {"boy", "boys", "garçon", "garçons", 0},
    {"bicycle", "bicycles", "vélo", "vélos", 0}, {"garden", "gardens", "jardin", "jardins", 0},
    {"cake", "cakes", "gâteau", "gâteaux", 0}, {"boat", "boats", "bateau", "bateaux", 0},
    {"hat", "hats", "chapeau", "chapeaux", 0}, {"teacher", "teachers", "professeur", "professeurs", 0},
    {"doctor", "doctors", "médecin", "médecins", 0}, {"neighbour", "neighbours", "voisin", "voisins", 0},
    {"brother", "brothers", "frère", "frères", 0}, {"father", "fathers", "père", "pères", 0},
    {"horse", "horses", "cheval", "chevaux", 0}, {"newspaper", "newspapers", "journal", "journaux", 0},
    {"pencil", "pencils", "crayon", "crayons", 0}, {"glass", "glasses", "verre", "verres", 0},
    {"train", "trains", "train", "trains", 0}, {"coat", "coats", "manteau", "manteaux", 0},
    {"ball", "balls", "ballon", "ballons", 0}, {"bed", "beds", "lit", "lits", 0},
    {"bag", "bags", "sac", "sacs", 0}, {"cheese", "cheeses", "fromage", "fromages", 0},
    {"table", "tables", "table", "tables", 1}, {"apple", "apples", "pomme", "pommes", 1},
    {"house", "houses", "maison", "maisons", 1}, {"car", "cars", "voiture", "voitures", 1},
    {"girl", "girls", "fille", "filles", 1}, {"flower", "flowers", "fleur", "fleurs", 1},
    {"door", "doors", "porte", "portes", 1}, {"letter", "letters", "lettre", "lettres", 1},
    {"chair", "chairs", "chaise", "chaises", 1}, {"window", "windows", "fenêtre", "fenêtres", 1},
    {"box", "boxes", "boîte", "boîtes", 1}, {"key", "keys", "clé", "clés", 1},
    {"cup", "cups", "tasse", "tasses", 1}, {"lamp", "lamps", "lampe", "lampes", 1},
    {"dress", "dresses", "robe", "robes", 1}, {"shirt", "shirts", "chemise", "chemises", 1},
    {"road", "roads", "route", "routes", 1}, {"city", "cities", "ville", "villes", 1},
    {"river", "rivers", "rivière", "rivières", 1}, {"mountain", "mountains", "montagne", "montagnes", 1},
    {"mother", "mothers", "mère", "mères", 1}, {"sister", "sisters", "sœur", "sœurs", 1},
    {"cow", "cows", "vache", "vaches", 1}, {"bottle", "bottles", "bouteille", "bouteilles", 1},
};

typedef struct {
    const char *en, *fr_m, *fr_f, *fr_mpl, *fr_fpl;
    int before; /* comes before the noun in French */
} Adjective;

static const Adjective ADJECTIVES[] = {
    {"red", "rouge", "rouge", "rouges", "rouges", 0}, {"green", "vert", "verte", "verts", "vertes", 0},
    {"black", "noir", "noire", "noirs", "noires", 0}, {"white", "blanc", "blanche", "blancs", "blanches", 0},
    {"blue", "bleu", "bleue", "bleus", "bleues", 0}, {"yellow", "jaune", "jaune", "jaunes", "jaunes", 0},
    {"heavy", "lourd", "lourde", "lourds", "lourdes", 0}, {"clean", "propre", "propre", "propres", "propres", 0},
    {"dirty", "sale", "sale", "sales", "sales", 0}, {"empty", "vide", "vide", "vides", "vides", 0},
    {"broken", "cassé", "cassée", "cassés", "cassées", 0}, {"round", "rond", "ronde", "ronds", "rondes", 0},
    {"cold", "froid", "froide", "froids", "froides", 0}, {"hot", "chaud", "chaude", "chauds", "chaudes", 0},
    {"happy", "content", "contente", "contents", "contentes", 0},
    {"tired", "fatigué", "fatiguée", "fatigués", "fatiguées", 0},
    {"strong", "fort", "forte", "forts", "fortes", 0}, {"rich", "riche", "riche", "riches", "riches", 0},
    {"small", "petit", "petite", "petits", "petites", 1}, {"big", "grand", "grande", "grands", "grandes", 1},
    {"young", "jeune", "jeune", "jeunes", "jeunes", 1}, {"pretty", "joli", "jolie", "jolis", "jolies", 1},
};

typedef struct {
    const char *en[2], *en_3sg[2]; /* one or two English words: "look for" */
    const char *fr_stem;           /* a regular -er verb */
} Verb;

static const Verb VERBS[] = {
    {{"watch"}, {"watches"}, "regard"}, {{"look", "for"}, {"looks", "for"}, "cherch"},
    {{"carry"}, {"carries"}, "port"}, {{"find"}, {"finds"}, "trouv"},
    {{"keep"}, {"keeps"}, "gard"}, {{"wash"}, {"washes"}, "lav"},
    {{"touch"}, {"touches"}, "touch"}, {{"show"}, {"shows"}, "montr"},
    {{"break"}, {"breaks"}, "cass"}, {{"pull"}, {"pulls"}, "tir"},
    {{"push"}, {"pushes"}, "pouss"}, {{"visit"}, {"visits"}, "visit"},
    {{"draw"}, {"draws"}, "dessin"}, {{"prepare"}, {"prepares"}, "prépar"},
    {{"repair"}, {"repairs"}, "répar"}, {{"hide"}, {"hides"}, "cach"},
    {{"count"}, {"counts"}, "compt"}, {{"close"}, {"closes"}, "ferm"},
    {{"leave"}, {"leaves"}, "quitt"}, {{"cook"}, {"cooks"}, "cuisin"},
};

/* Subject pronouns: English, French, conjugation person (0 je ... 5 ils). */
static const struct {
    const char *en, *fr;
    int person;
} SUBJECTS[] = {{"I", "je", 0}, {"you", "tu", 1}, {"he", "il", 2}, {"she", "elle", 2},
                {"we", "nous", 3}, {"they", "ils", 5}};

static const struct {
    const char *en, *fr;
} OBJECTS[] = {{"him", "le"}, {"her", "la"}, {"them", "les"}};

/* Determiners: English singular/plural and French m, f, plural; NULL: none. */
static const struct {
    const char *en_sg, *en_pl, *fr_m, *fr_f, *fr_pl;
} DETERMINERS[] = {{"the", "the", "le", "la", "les"}, {"a", "some", "un", "une", "des"},
                   {"my", "my", "mon", "ma", "mes"}, {"this", "these", "ce", "cette", "ces"}};

static const struct {
    const char *en[3], *fr[2];
    int n_en, n_fr, de; /* de: French "de" that contracts with le/les */
} PREPOSITIONS[] = {
    {{"on"}, {"sur"}, 1, 1, 0}, {{"under"}, {"sous"}, 1, 1, 0}, {{"in"}, {"dans"}, 1, 1, 0},
    {{"behind"}, {"derrière"}, 1, 1, 0}, {{"with"}, {"avec"}, 1, 1, 0},
    {{"in", "front", "of"}, {"devant"}, 3, 1, 0}, {{"near"}, {"près"}, 1, 1, 1},
};

static const char *const ENDINGS[6] = {"e", "es", "e", "ons", "ez", "ent"};

#define PICK(rng, table) ((int)pcg32_below(rng, sizeof table / sizeof *table))

/* A noun phrase and the English token indices French links to. */
typedef struct {
    int noun, plural, det, n_adj, adj[2];
    int e_det, e_noun, e_adj[2];
} NP;

static void draw_np(NP *np, Pcg32 *rng, int max_adj)
{
    memset(np, 0, sizeof *np);
    np->noun = PICK(rng, NOUNS);
    np->plural = pcg32_below(rng, 3) == 0;
    np->det = PICK(rng, DETERMINERS);
    np->n_adj = max_adj > 0 ? (int)pcg32_below(rng, 8) / 5 : 0; /* 0 or 1, often 0 */
    if (max_adj > 1 && np->n_adj == 1 && pcg32_below(rng, 4) == 0)
        np->n_adj = 2;
    for (int k = 0; k < np->n_adj; k++) {
        do
            np->adj[k] = PICK(rng, ADJECTIVES);
        while (k == 1 && (np->adj[1] == np->adj[0] ||
                          ADJECTIVES[np->adj[1]].before != ADJECTIVES[np->adj[0]].before));
    }
}

static int starts_with_vowel(const char *w)
{
    return strchr("aeiou", w[0]) != NULL;
}

static void en_np(GenPair *p, NP *np)
{
    const char *det = np->plural ? DETERMINERS[np->det].en_pl : DETERMINERS[np->det].en_sg;
    const char *next = np->n_adj ? ADJECTIVES[np->adj[0]].en : NOUNS[np->noun].en;
    if (!strcmp(det, "a") && starts_with_vowel(next))
        det = "an";
    np->e_det = gen_src(p, det);
    for (int k = 0; k < np->n_adj; k++)
        np->e_adj[k] = gen_src(p, ADJECTIVES[np->adj[k]].en);
    np->e_noun = gen_src(p, np->plural ? NOUNS[np->noun].en_pl : NOUNS[np->noun].en);
}

static const char *fr_adjective(const NP *np, int k)
{
    const Adjective *a = &ADJECTIVES[np->adj[k]];
    int fem = NOUNS[np->noun].fem;
    return np->plural ? (fem ? a->fr_fpl : a->fr_mpl) : (fem ? a->fr_f : a->fr_m);
}

/* French determiner of np; with `de` (after près), le/les contract to du/des. */
static void fr_det(GenPair *p, const NP *np, int de, int e_prep)
{
    int fem = NOUNS[np->noun].fem;
    const char *det = np->plural ? DETERMINERS[np->det].fr_pl
                                 : fem ? DETERMINERS[np->det].fr_f : DETERMINERS[np->det].fr_m;
    if (de && np->det == 0 && (np->plural || !fem)) {
        int i = gen_tgt(p, np->plural ? "des" : "du"); /* de + les, de + le */
        gen_link(p, e_prep, i);
        gen_link(p, np->e_det, i);
        return;
    }
    if (de)
        gen_link(p, e_prep, gen_tgt(p, "de"));
    gen_link(p, np->e_det, gen_tgt(p, det));
}

static void fr_np(GenPair *p, const NP *np, int de, int e_prep)
{
    fr_det(p, np, de, e_prep);
    /* adjectives placed before the noun keep their order; those after it mirror it */
    for (int k = 0; k < np->n_adj; k++)
        if (ADJECTIVES[np->adj[k]].before)
            gen_link(p, np->e_adj[k], gen_tgt(p, fr_adjective(np, k)));
    gen_link(p, np->e_noun, gen_tgt(p, np->plural ? NOUNS[np->noun].fr_pl : NOUNS[np->noun].fr));
    for (int k = np->n_adj - 1; k >= 0; k--)
        if (!ADJECTIVES[np->adj[k]].before)
            gen_link(p, np->e_adj[k], gen_tgt(p, fr_adjective(np, k)));
}

static void fr_verb(GenPair *p, int verb, int person, const int *e_verb, int n_e)
{
    char form[GEN_TOKEN_BYTES];
    snprintf(form, sizeof form, "%s%s", VERBS[verb].fr_stem, ENDINGS[person]);
    int i = gen_tgt(p, form);
    for (int k = 0; k < n_e; k++)
        gen_link(p, e_verb[k], i);
}

/* English verb (base or third person singular); records its token indices. */
static int en_verb(GenPair *p, int verb, int third_singular, int *e_verb)
{
    const char *const *words = third_singular ? VERBS[verb].en_3sg : VERBS[verb].en;
    int n = words[1] ? 2 : 1;
    for (int k = 0; k < n; k++)
        e_verb[k] = gen_src(p, words[k]);
    return n;
}

/* A modifier of a main noun phrase: a prepositional phrase or a relative clause. */
typedef struct {
    int kind; /* 0 none, 1 prepositional phrase, 2 subject relative, 3 object relative */
    int prep, verb, subject_pronoun, e_verb[2], n_e_verb, e_that, e_prep[3], e_subject;
    NP inner;
} Modifier;

/* A prepositional phrase (relative 0) or a relative clause (relative 1), or nothing. */
static void draw_modifier(Modifier *m, Pcg32 *rng, int relative)
{
    memset(m, 0, sizeof *m);
    uint32_t r = pcg32_below(rng, 10);
    if (relative)
        m->kind = r < 6 ? 0 : r < 9 ? 2 : 3;
    else
        m->kind = r < 6 ? 0 : 1;
    m->prep = PICK(rng, PREPOSITIONS);
    m->verb = PICK(rng, VERBS);
    /* I, you, we: "que je", never the elided "qu'il" */
    static const int consonant_subjects[3] = {0, 1, 4};
    m->subject_pronoun = pcg32_below(rng, 2) ? consonant_subjects[pcg32_below(rng, 3)] : -1;
    draw_np(&m->inner, rng, 1);
    /* "près de" takes the, my or this: never the elided "d'un" */
    if (PREPOSITIONS[m->prep].de && m->inner.det == 1)
        m->inner.det = 0;
}

static void en_modifier(GenPair *p, Modifier *m, const NP *head)
{
    if (m->kind == 1) {
        for (int k = 0; k < PREPOSITIONS[m->prep].n_en; k++)
            m->e_prep[k] = gen_src(p, PREPOSITIONS[m->prep].en[k]);
        en_np(p, &m->inner);
    } else if (m->kind == 2) { /* that watches the cat */
        m->e_that = gen_src(p, "that");
        m->n_e_verb = en_verb(p, m->verb, !head->plural, m->e_verb);
        en_np(p, &m->inner);
    } else if (m->kind == 3) { /* that the cat watches / that I watch */
        m->e_that = gen_src(p, "that");
        int third;
        if (m->subject_pronoun >= 0) {
            m->e_subject = gen_src(p, SUBJECTS[m->subject_pronoun].en);
            third = SUBJECTS[m->subject_pronoun].person == 2;
        } else {
            en_np(p, &m->inner);
            third = !m->inner.plural;
        }
        m->n_e_verb = en_verb(p, m->verb, third, m->e_verb);
    }
}

static void fr_modifier(GenPair *p, const Modifier *m, const NP *head)
{
    if (m->kind == 1) {
        int i = gen_tgt(p, PREPOSITIONS[m->prep].fr[0]);
        for (int k = 0; k < PREPOSITIONS[m->prep].n_en; k++)
            gen_link(p, m->e_prep[k], i);
        fr_np(p, &m->inner, PREPOSITIONS[m->prep].de, m->e_prep[0]);
    } else if (m->kind == 2) {
        gen_link(p, m->e_that, gen_tgt(p, "qui"));
        fr_verb(p, m->verb, head->plural ? 5 : 2, m->e_verb, m->n_e_verb);
        fr_np(p, &m->inner, 0, 0);
    } else if (m->kind == 3) {
        gen_link(p, m->e_that, gen_tgt(p, "que"));
        int person;
        if (m->subject_pronoun >= 0) {
            gen_link(p, m->e_subject, gen_tgt(p, SUBJECTS[m->subject_pronoun].fr));
            person = SUBJECTS[m->subject_pronoun].person;
        } else {
            fr_np(p, &m->inner, 0, 0);
            person = m->inner.plural ? 5 : 2;
        }
        fr_verb(p, m->verb, person, m->e_verb, m->n_e_verb);
    }
}

void gen_toy_fr(GenPair *p, Pcg32 *rng)
{
    /* subject: a pronoun, or a noun phrase with an optional modifier */
    int subject_pronoun = pcg32_below(rng, 3) == 0 ? PICK(rng, SUBJECTS) : -1;
    NP subject, object;
    Modifier subject_mod[2], object_mod[2]; /* a prepositional phrase, then a relative clause */
    draw_np(&subject, rng, 2);
    draw_modifier(&subject_mod[0], rng, 0);
    draw_modifier(&subject_mod[1], rng, 1);
    int negated = pcg32_below(rng, 4) == 0;
    int verb = PICK(rng, VERBS);
    int object_pronoun = pcg32_below(rng, 4) == 0 ? PICK(rng, OBJECTS) : -1;
    draw_np(&object, rng, 2);
    draw_modifier(&object_mod[0], rng, 0);
    draw_modifier(&object_mod[1], rng, 1);

    /* English */
    int e_subject = -1, person, e_not = -1, e_verb[2], n_e_verb, e_object = -1;
    if (subject_pronoun >= 0) {
        e_subject = gen_src(p, SUBJECTS[subject_pronoun].en);
        person = SUBJECTS[subject_pronoun].person;
    } else {
        en_np(p, &subject);
        en_modifier(p, &subject_mod[0], &subject);
        en_modifier(p, &subject_mod[1], &subject);
        person = subject.plural ? 5 : 2;
    }
    if (negated) {
        gen_src(p, person == 2 ? "does" : "do"); /* aligns with nothing */
        e_not = gen_src(p, "not");
        n_e_verb = en_verb(p, verb, 0, e_verb);
    } else {
        n_e_verb = en_verb(p, verb, person == 2, e_verb);
    }
    if (object_pronoun >= 0) {
        e_object = gen_src(p, OBJECTS[object_pronoun].en);
    } else {
        en_np(p, &object);
        en_modifier(p, &object_mod[0], &object);
        en_modifier(p, &object_mod[1], &object);
    }
    int e_stop = gen_src(p, ".");

    /* French: subject (ne) (object pronoun) verb (pas) (object) . */
    if (subject_pronoun >= 0) {
        gen_link(p, e_subject, gen_tgt(p, SUBJECTS[subject_pronoun].fr));
    } else {
        fr_np(p, &subject, 0, 0);
        fr_modifier(p, &subject_mod[0], &subject);
        fr_modifier(p, &subject_mod[1], &subject);
    }
    if (negated)
        gen_link(p, e_not, gen_tgt(p, "ne"));
    if (object_pronoun >= 0)
        gen_link(p, e_object, gen_tgt(p, OBJECTS[object_pronoun].fr));
    fr_verb(p, verb, person, e_verb, n_e_verb);
    if (negated)
        gen_link(p, e_not, gen_tgt(p, "pas"));
    if (object_pronoun < 0) {
        fr_np(p, &object, 0, 0);
        fr_modifier(p, &object_mod[0], &object);
        fr_modifier(p, &object_mod[1], &object);
    }
    gen_link(p, e_stop, gen_tgt(p, "."));
}
