/* config_schema.c: every config key, once (type, field, default, range, doc), with the
 * questions about keys that config.h answers, reading a value of a key from text, and
 * the defaults. */
#include "run/config_schema.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/number.h"
#include "text/subwords.h"
#include "text/tokenize.h"

/* Choice fields are enums stored and read as int. */
_Static_assert(sizeof(ScoreKind) == sizeof(int) && sizeof(CellKind) == sizeof(int) &&
               sizeof(TokenLevel) == sizeof(int), "choices are ints");

static const char *const optimizer_names[] = {"adam", "sgd", "adadelta", NULL};
static const char *const scheduling_names[] = {"none", "plateau", "inverse_sqrt", NULL};
static const char *const metric_names[] = {"bleu", "loss", "exact", NULL};
static const char *const svg_names[] = {"last", "all", "none", NULL};
static const char *const attention_mode_names[] = {"soft", "hard", NULL};
static const char *const hard_reward_names[] = {"sentence", "token", NULL};
static const char *const encoder_names[] = {"text", "image", NULL};
static const char *const subword_names[] = {"none", "sentencepiece", NULL};
const char *const decode_mode_names[] = {"auto", "soft", "argmax", NULL};
/* cell_names (CellKind order), then none: ENCODER_CELL_NONE, the attention-only encoder,
 * and DECODER_CELL_NONE, the Transformer decoder */
static const char *const encoder_cell_names[] = {"gru", "lstm", "rnn", "none", NULL};
static const char *const decoder_cell_names[] = {"gru", "lstm", "rnn", "none", NULL};

#define OFF(field) offsetof(Config, field)
#define BIG 1e18
#define FREE KEY_FREE_ON_RESUME

/* The schema: every key of the config, once. */
const KeySpec config_keys[] = {
    {"name", T_STR, OFF(name), "s2s", 0, 0, NULL, FREE,
    "name of the run; the default run_dir is runs/<name>"},
    {"seed", T_INT, OFF(seed), "1", 0, 4294967295.0, NULL, 0,
    "seed of every random number (PCG32 streams: init, shuffle)"},
    {"run_dir", T_STR, OFF(run_dir), "", 0, 0, NULL, FREE,
    "where checkpoints, logs and alignments go (empty: runs/<name>)"},

    {"data.train_src", T_STR, OFF(data.train_src), "", 0, 0, NULL, 0,
    "training source, one sentence a line (with train_tgt)"},
    {"data.train_tgt", T_STR, OFF(data.train_tgt), "", 0, 0, NULL, 0,
    "training target, line-aligned with train_src"},
    {"data.train_tsv", T_STR, OFF(data.train_tsv), "", 0, 0, NULL, 0,
    "or: one file of source<TAB>target lines"},
    {"data.valid_src", T_STR, OFF(data.valid_src), "", 0, 0, NULL, 0,
    "validation source (optional; with valid_tgt)"},
    {"data.valid_tgt", T_STR, OFF(data.valid_tgt), "", 0, 0, NULL, 0, "validation target"},
    {"data.valid_tsv", T_STR, OFF(data.valid_tsv), "", 0, 0, NULL, 0,
    "or: validation pairs as one TSV file"},
    {"data.test_src", T_STR, OFF(data.test_src), "", 0, 0, NULL, FREE,
    "test source (optional; translated by make demo and scripts)"},
    {"data.test_tgt", T_STR, OFF(data.test_tgt), "", 0, 0, NULL, FREE, "test target"},
    {"data.test_tsv", T_STR, OFF(data.test_tsv), "", 0, 0, NULL, FREE,
    "or: test pairs as one TSV file"},
    {"data.valid_align", T_STR, OFF(data.valid_align), "", 0, 0, NULL, FREE,
    "gold alignments of the validation pairs (Pharaoh j-i, j?i possible), for AER"},
    {"data.test_align", T_STR, OFF(data.test_align), "", 0, 0, NULL, FREE,
    "gold alignments of the test pairs, for the final AER"},
    {"data.train_ground", T_STR, OFF(data.train_ground), "", 0, 0, NULL, 0,
    "image corpora: each caption word's box in its picture (one line a caption: `-` or x0,y0,x1,y1 per word), checked when read"},
    {"data.valid_ground", T_STR, OFF(data.valid_ground), "", 0, 0, NULL, FREE,
    "the validation captions' boxes: validation scores attention_correctness (pointing, mass)"},
    {"data.test_ground", T_STR, OFF(data.test_ground), "", 0, 0, NULL, FREE,
    "the test captions' boxes"},
    {"data.image_size", T_INT, OFF(data.image_size), "64", 2, 1024, NULL, 0,
    "image corpora: pictures are resized to this many pixels square (divisible by 2^L for L conv blocks)"},
    {"data.image_resize", T_BOOL, OFF(data.image_resize), "true", 0, 0, NULL, 0,
    "resize pictures of another size (bilinear, the aspect not kept); false: refuse them"},
    {"data.tsv_reverse", T_BOOL, OFF(data.tsv_reverse), "false", 0, 0, NULL, 0,
    "in TSV files, the second column is the source"},
    {"data.level", T_ENUM, OFF(data.level), "word", 0, 0, token_level_names, 0,
    "tokens are words (punctuation split off) or characters"},
    {"data.lowercase", T_BOOL, OFF(data.lowercase), "false", 0, 0, NULL, 0,
    "lowercase both sides (full Unicode case mapping)"},
    {"data.subwords", T_ENUM, OFF(data.subwords), "none", 0, 0, subword_names, 0,
    "none: tokens are data.level's; sentencepiece: subword pieces of a SentencePiece model learned from the training split at the start of the run (stored in every checkpoint)"},
    {"data.subword_vocab_size", T_INT, OFF(data.subword_vocab_size), "8000", 16, 1000000, NULL, 0,
    "sentencepiece: pieces in each model (its <unk>, <s> and </s> included)"},
    {"data.subword_type", T_ENUM, OFF(data.subword_type), "unigram", 0, 0, subword_type_names, 0,
    "sentencepiece: the model, unigram (Kudo 2018) or bpe (Sennrich et al. 2016)"},
    {"data.subword_joint", T_BOOL, OFF(data.subword_joint), "true", 0, 0, NULL, 0,
    "sentencepiece: one model learned from both sides; false: one per side"},
    {"data.subword_alpha", T_REAL, OFF(data.subword_alpha), "0", 0, 1, NULL, 0,
    "sentencepiece: > 0: every epoch splits each training sentence anew, drawing its pieces (subword regularisation, Kudo 2018: unigram, splits drawn with probability ~ P^alpha; bpe: BPE-dropout, each merge dropped with probability alpha); 0: the best split always"},
    {"data.subword_src_model", T_STR, OFF(data.subword_src_model), "", 0, 0, NULL, 0,
    "sentencepiece: a SentencePiece .model file to split the source with instead of learning one (with subword_tgt_model; the same file twice for a joint model)"},
    {"data.subword_tgt_model", T_STR, OFF(data.subword_tgt_model), "", 0, 0, NULL, 0,
    "sentencepiece: the target's .model file (with subword_src_model)"},
    {"data.max_length", T_INT, OFF(data.max_length), "50", 1, 1000, NULL, 0,
    "training pairs with more tokens on a side are skipped"},
    {"data.max_line_bytes", T_INT, OFF(data.max_line_bytes), "1048576", 64, 1073741824, NULL, 0,
    "lines longer than this are skipped without being held in memory"},
    {"data.src_vocab_size", T_INT, OFF(data.src_vocab_size), "0", 0, 10000000, NULL, 0,
    "most entries of the source vocabulary, specials included (0: no limit)"},
    {"data.tgt_vocab_size", T_INT, OFF(data.tgt_vocab_size), "0", 0, 10000000, NULL, 0,
    "most entries of the target vocabulary (0: no limit)"},
    {"data.src_min_freq", T_INT, OFF(data.src_min_freq), "1", 1, 1000000, NULL, 0,
    "source words seen fewer times become <unk>"},
    {"data.tgt_min_freq", T_INT, OFF(data.tgt_min_freq), "1", 1, 1000000, NULL, 0,
    "target words seen fewer times become <unk>"},

    {"model.encoder", T_ENUM, OFF(model.encoder), "text", 0, 0, encoder_names, 0,
    "text: the source is sentences; image: pictures (the .src lines are paths), read by conv blocks into a grid of cells the attention looks at (Show, Attend and Tell; src/model/MODEL.md)"},
    {"model.conv_channels", T_INTLIST, OFF(model.conv_channels), "[16, 32, 64]", 1, 4096, NULL, 0,
    "image: the channels of each conv block (3x3 conv, relu, 2x2 max-pool); d_h is the last; 1 to 6 blocks"},
    {"model.grid_positions", T_BOOL, OFF(model.grid_positions), "true", 0, 0, NULL, 0,
    "image: add a learned position to each grid cell"},
    {"model.grid_position_sines", T_BOOL, OFF(model.grid_position_sines), "false", 0, 0, NULL, 0,
    "image: the grid positions are fixed, not learned: the Transformer's sinusoidal positions of the cell's row (the first half of the channels) and column (the rest; src/model/MODEL.md)"},
    {"model.context_gate", T_BOOL, OFF(model.context_gate), "false", 0, 0, NULL, 0,
    "scale the context by beta_i = sigmoid(w_beta . s_{i-1} + b_beta) where the decoder and the readout read it (Xu et al. 2015)"},
    {"model.embedding_size", T_INT, OFF(model.embedding_size), "64", 1, 8192, NULL, 0,
    "m: word embedding size, both sides"},
    {"model.encoder_size", T_INT, OFF(model.encoder_size), "64", 1, 8192, NULL, 0,
    "n: encoder units per direction"},
    {"model.decoder_size", T_INT, OFF(model.decoder_size), "128", 1, 8192, NULL, 0,
    "p: decoder units"},
    {"model.attention_size", T_INT, OFF(model.attention_size), "64", 1, 8192, NULL, 0,
    "a: attention layer size (additive and scaled_dot)"},
    {"model.readout_size", T_INT, OFF(model.readout_size), "128", 1, 8192, NULL, 0,
    "l: readout layer size"},
    {"model.tie_output", T_BOOL, OFF(model.tie_output), "false", 0, 0, NULL, 0,
    "the output layer's weights W_o are the target embeddings E_y (tied, Press and Wolf 2017): V_y l fewer weights, and every step trains every target embedding; needs readout_size = embedding_size"},
    {"model.share_embeddings", T_BOOL, OFF(model.share_embeddings), "false", 0, 0, NULL, 0,
    "the source embeddings E_x are the target embeddings E_y: one vocabulary of both sides' words or pieces (counted together; data.src_vocab_size and tgt_vocab_size, src_min_freq and tgt_min_freq must agree), one table trained by both (fairseq's --share-all-embeddings, Joey NMT's tied_embeddings); with subwords, needs data.subword_joint; a text encoder"},
    {"model.attention", T_ENUM, OFF(model.attention), "additive", 0, 0, score_names, 0,
    "attention score (src/model/MODEL.md): v_a.tanh(W_a s + U_a h), s.h (needs decoder_size = d_h: 2 encoder_size, or embedding_size with encoder_cell none), s.W_g h, W_q s.W_k h / sqrt(a), or none: a fixed context [fwd_h_S; bwd_h_1] (with encoder_cell none: the mean of the annotations)"},
    {"model.attention_heads", T_INT, OFF(model.attention_heads), "1", 1, ATTN_MAX_HEADS, NULL, 0,
    "attention heads: each scores its own slices of the query, the keys and the annotations, and reads its slice of the context (src/model/MODEL.md); the alignment is their mean"},
    {"model.encoder_cell", T_ENUM, OFF(model.encoder_cell), "gru", 0, 0, encoder_cell_names, 0,
    "encoder cell, in torch.nn's gate layout (rnn: tanh); none: no recurrent encoder, only positions and the self-attention layers (src/model/MODEL.md)"},
    {"model.decoder_cell", T_ENUM, OFF(model.decoder_cell), "gru", 0, 0, decoder_cell_names, 0,
    "decoder cell (an LSTM decoder starts from cell state 0, or with encoder_cell none from tanh(W_c mean + b_c)); none: the Transformer decoder, decoder_layers layers of masked self-attention, cross-attention over the annotations and a feed-forward network, embedding_size wide (src/model/MODEL.md)"},
    {"model.encoder_layers", T_INT, OFF(model.encoder_layers), "1", 1, 4, NULL, 0,
    "stacked bidirectional encoder layers; each above the first reads [fwd_h; bwd_h] of the one below"},
    {"model.decoder_layers", T_INT, OFF(model.decoder_layers), "1", 1, DEC_MAX_LAYERS, NULL, 0,
    "the Transformer decoder's layers (decoder_cell none), each torch.nn.TransformerDecoderLayer (post-LN, relu) with attention_heads heads, self_attention_ffn inner width (0: 4 embedding_size) and self_attention_dropout"},
    {"model.self_attention_layers", T_INT, OFF(model.self_attention_layers), "0", 0, SA_MAX_LAYERS,
    NULL, 0,
    "self-attention layers on the encoder's annotations, each torch.nn.TransformerEncoderLayer (post-LN, relu) of width d_h (src/model/MODEL.md)"},
    {"model.self_attention_heads", T_INT, OFF(model.self_attention_heads), "4", 1, ATTN_MAX_HEADS,
    NULL, 0, "heads of each self-attention layer; they must divide d_h"},
    {"model.self_attention_ffn", T_INT, OFF(model.self_attention_ffn), "0", 0, 65536, NULL, 0,
    "inner width of each self-attention layer's feed-forward network (0: 4 d_h)"},
    {"model.self_attention_dropout", T_REAL, OFF(model.self_attention_dropout), "0.1", 0, 0.9,
    NULL, 0,
    "in training, dropout in each self-attention layer at torch's four sites: the weights, the attention's output, the feed-forward's inner layer and its output"},
    {"model.embedding_dropout", T_REAL, OFF(model.embedding_dropout), "0", 0, 0.9, NULL, 0,
    "in training, zero each embedding value (source and target) with this probability"},
    {"model.readout_dropout", T_REAL, OFF(model.readout_dropout), "0", 0, 0.9, NULL, 0,
    "in training, zero each readout value t_i with this probability"},
    {"model.attention_mode", T_ENUM, OFF(model.attention_mode), "soft", 0, 0, attention_mode_names,
    0,
    "soft: the context is the weighted sum of the annotations; hard: in training each head samples one position from its weights (Xu et al. 2015, trained by REINFORCE; src/model/MODEL.md) and decoding takes the most probable"},
    {"model.init_range", T_REAL, OFF(model.init_range), "0.1", 0, 10, NULL, KEY_MIN_EXCLUSIVE,
    "weights start uniform in [-init_range, init_range], biases at 0"},

    {"training.optimizer", T_ENUM, OFF(training.optimizer), "adam", 0, 0, optimizer_names, 0,
    "the update rule"},
    {"training.learning_rate", T_REAL, OFF(training.learning_rate), "0.001", 0, 100, NULL,
    KEY_MIN_EXCLUSIVE, "initial learning rate (Adadelta: a multiplier, usually 1)"},
    {"training.warmup_steps", T_INT, OFF(training.warmup_steps), "-1", -1, BIG, NULL, 0,
    "the learning rate rises linearly from 0 over the first this many updates (update k of W uses k/W of it), then follows the schedule; -1: 200 for a model with self-attention layers (post-LN layers start late without it), else 0"},
    {"training.adam_beta1", T_REAL, OFF(training.adam_beta1), "0.9", 0, 1, NULL, 0,
    "Adam's first-moment decay"},
    {"training.adam_beta2", T_REAL, OFF(training.adam_beta2), "0.999", 0, 1, NULL, 0,
    "Adam's second-moment decay"},
    {"training.adam_eps", T_REAL, OFF(training.adam_eps), "1e-8", 0, 1, NULL, KEY_MIN_EXCLUSIVE,
    "Adam's epsilon"},
    {"training.adadelta_rho", T_REAL, OFF(training.adadelta_rho), "0.95", 0, 1, NULL, 0,
    "Adadelta's decay (Zeiler 2012)"},
    {"training.adadelta_eps", T_REAL, OFF(training.adadelta_eps), "1e-6", 0, 1, NULL,
    KEY_MIN_EXCLUSIVE, "Adadelta's epsilon"},
    {"training.clip_grad_norm", T_REAL, OFF(training.clip_grad_norm), "5", 0, 1e6, NULL, 0,
    "rescale gradients whose global L2 norm exceeds this (0: off)"},
    {"training.label_smoothing", T_REAL, OFF(training.label_smoothing), "0", 0, 0.9, NULL, 0,
    "train towards (1 - eps) on the reference word and eps spread over the vocabulary"},
    {"training.batch_size", T_INT, OFF(training.batch_size), "32", 1, 65536, NULL, 0,
    "sentence pairs per step (with training.batch_tokens: at most)"},
    {"training.batch_tokens", T_INT, OFF(training.batch_tokens), "0", 0, 16777216, NULL, 0,
    "0: batches count pairs; else a batch holds as many pairs as fit in this many tokens, its pairs times its longest side with the end mark (fairseq's --max-tokens), up to training.batch_size pairs"},
    {"training.bucket_batches", T_INT, OFF(training.bucket_batches), "100", 1, 1000000, NULL, 0,
    "pairs are sorted by length within pools of this many batches, or of this many token budgets with training.batch_tokens (1: no bucketing)"},
    {"training.shuffle", T_BOOL, OFF(training.shuffle), "true", 0, 0, NULL, 0,
    "shuffle the pairs and the batch order every epoch"},
    {"training.max_steps", T_INT, OFF(training.max_steps), "0", 0, BIG, NULL, FREE,
    "stop after this many updates (0: no limit)"},
    {"training.epochs", T_INT, OFF(training.epochs), "10", 0, 1000000, NULL, FREE,
    "stop after this many passes over the data (0: no limit)"},
    {"training.max_time", T_REAL, OFF(training.max_time), "0", 0, 1e9, NULL, FREE,
    "stop after this many seconds of training, validation not counted (0: no limit)"},
    {"training.scheduling", T_ENUM, OFF(training.scheduling), "plateau", 0, 0, scheduling_names, 0,
    "plateau: multiply the learning rate by decrease_factor after patience validations without improvement; "
    "inverse_sqrt: after the W warm-up updates, update k uses learning_rate sqrt(W / k) (Vaswani et al. 2017; needs W >= 1)"},
    {"training.patience", T_INT, OFF(training.patience), "3", 1, 1000000, NULL, 0,
    "validations without improvement before the learning rate decays"},
    {"training.decrease_factor", T_REAL, OFF(training.decrease_factor), "0.5", 0, 1, NULL,
    KEY_MIN_EXCLUSIVE, "learning rate decay factor"},
    {"training.learning_rate_min", T_REAL, OFF(training.learning_rate_min), "1e-6", 0, 100, NULL,
    0, "the learning rate never decays below this"},
    {"training.early_stopping", T_INT, OFF(training.early_stopping), "0", 0, 1000000, NULL, FREE,
    "stop after this many validations without improvement (0: never)"},
    {"training.early_stopping_metric", T_ENUM, OFF(training.early_stopping_metric), "bleu", 0, 0,
    metric_names, 0,
    "the validation score that picks best.ckpt and drives scheduling and early stopping"},
    {"training.average_last", T_INT, OFF(training.average_last), "1", 1, 64, NULL, 0,
    "validation scores, and best.ckpt keeps, the mean of the weights at the last this many validations (this one included); training goes on from the weights of the moment (1: no averaging)"},
    {"training.valid_every", T_INT, OFF(training.valid_every), "1000", 1, BIG, NULL, FREE,
    "validate (and save last.ckpt) every this many steps"},
    {"training.log_every", T_INT, OFF(training.log_every), "100", 1, BIG, NULL, FREE,
    "log a progress line every this many steps (off a terminal)"},
    {"training.max_bad_steps", T_INT, OFF(training.max_bad_steps), "5", 1, 1000000, NULL, FREE,
    "stop (exit 4) after this many non-finite steps in a row"},
    {"training.threads", T_INT, OFF(training.threads), "0", 0, 1024, NULL, FREE,
    "threads (0: one for batches of up to 4 sentences, else one per core): the shards' passes run on them, one BLAS thread each, and one shard's products on all of them"},
    {"training.shards", T_INT, OFF(training.shards), "0", 0, CONFIG_MAX_SHARDS, NULL, 0,
    "each batch is cut into this many shards whose gradients are summed in a fixed order, one thread each (0: as many as threads, times the processes under mpirun, fixed when the run starts); the numbers depend on the shards, never on the threads or the processes, whose number must divide it"},
    {"training.hard_reinforce_weight", T_REAL, OFF(training.hard_reinforce_weight), "1", 0, 1e6,
    NULL, 0,
    "hard attention: lambda_r, the weight of the REINFORCE term (reward - baseline) log p(positions)"},
    {"training.hard_entropy_weight", T_REAL, OFF(training.hard_entropy_weight), "0.002", 0, 1e6,
    NULL, 0,
    "hard attention: lambda_e, the weight of the attention's entropy, which keeps the weights from collapsing early"},
    {"training.hard_expected_prob", T_REAL, OFF(training.hard_expected_prob), "0.5", 0, 1, NULL, 0,
    "hard attention: each sentence of a step uses the expected (soft) context with this probability, else samples"},
    {"training.hard_baseline_decay", T_REAL, OFF(training.hard_baseline_decay), "0.9", 0, 1, NULL,
    0, "hard attention: the running baseline b <- decay b + (1 - decay) (the step's mean reward)"},
    {"training.hard_warmup_steps", T_INT, OFF(training.hard_warmup_steps), "1000", 0, BIG, NULL, 0,
    "hard attention: the first this many steps use the expected context for every sentence, so "
    "that alignments form before sampling starts; validations up to its end neither decay "
    "the learning rate nor count towards early stopping, and the first after it replaces "
    "their best.ckpt"},
    {"training.hard_reward", T_ENUM, OFF(training.hard_reward), "token", 0, 0, hard_reward_names,
    0,
    "hard attention: sentence: the paper's reward log p(y | positions) against a running baseline; token: each step's own log p(y_i) against a per-token baseline (less variance, biased; src/model/MODEL.md)"},

    {"training.doubly_stochastic", T_REAL, OFF(training.doubly_stochastic), "0", 0, 1e6, NULL, 0,
    "lambda of the doubly stochastic term lambda (1/B) sum_b sum_j (1 - sum_i alpha_ij)^2 added to the loss: every source position (grid cell) is pushed to receive a total weight of about 1 over the caption"},
    {"training.attention_supervision", T_REAL, OFF(training.attention_supervision), "0", 0, 1e6,
    NULL, 0,
    "lambda of attention supervision (Liu et al. 2017), lambda (1/N) sum over the caption words with a box in data.train_ground of -log(the alignment's weight on the word's cells), added to the loss (N: the loss's target tokens): the attention is taught where each word's object is"},

    {"alignments.every", T_INT, OFF(alignments.every), "500", 0, BIG, NULL, FREE,
    "append the attention of the probe pairs to alignments.jsonl at step 0 and every this many steps (0: never)"},
    {"alignments.probes", T_INT, OFF(alignments.probes), "4", 0, 100, NULL, FREE,
    "the probe pairs are the first this many validation pairs..."},
    {"alignments.lines", T_INTLIST, OFF(alignments.lines), "[]", 1, 1e9, NULL, FREE,
    "... or these lines (1-based) of the validation files, e.g. [3, 17]"},
    {"alignments.max_dumps", T_INT, OFF(alignments.max_dumps), "200", 2, 1e9, NULL, FREE,
    "after this many dumps the interval doubles, and again each time the run doubles in length (max_dumps / 2 more each time); the last step is always dumped"},
    {"alignments.svg", T_ENUM, OFF(alignments.svg), "last", 0, 0, svg_names, FREE,
    "heatmaps/ keeps each probe's SVG of the last dump (heatmap-ID.svg), of every dump (heatmap-ID-STEP.svg), or none; report.html shows every dump"},

    {"translate.beam_size", T_INT, OFF(translate.beam_size), "5", 1, 100, NULL, FREE,
    "hypotheses kept by beam search in s2s translate (1: greedy)"},
    {"translate.alpha", T_REAL, OFF(translate.alpha), "0.6", 0, 10, NULL, FREE,
    "length normalisation of beam scores, ((5 + length) / 6)^alpha (Wu et al. 2016; 0: none)"},
    {"translate.detokenize", T_BOOL, OFF(translate.detokenize), "true", 0, 0, NULL, FREE,
    "write translations as text (\"j'ai froid.\"), not as tokens (\"j' ai froid .\")"},
    {"translate.max_source_length", T_INT, OFF(translate.max_source_length), "250", 1, 100000,
    NULL, FREE, "s2s translate cuts longer sources (with a warning)"},
    {"translate.max_output_ratio", T_REAL, OFF(translate.max_output_ratio), "2", 0, 1000, NULL,
    KEY_MIN_EXCLUSIVE,
    "a translation stops after max_output_ratio * (source tokens) + max_output_extra tokens"},
    {"translate.max_output_extra", T_INT, OFF(translate.max_output_extra), "10", 0, 100000, NULL,
    0, "see max_output_ratio"},
    {"translate.attention_mode", T_ENUM, OFF(translate.attention_mode), "auto", 0, 0,
    decode_mode_names, 0,
    "contexts when decoding, aligning and validating: soft (the weighted sum), argmax (each head reads its most probable position), or auto: argmax for a hard model, soft for a soft one (fixed for a run: validation scores, and so best.ckpt, are measured with it)"},
};

#undef OFF
#undef FREE

enum { N_KEYS = sizeof config_keys / sizeof *config_keys };
_Static_assert(N_KEYS <= CONFIG_MAX_KEYS, "raise CONFIG_MAX_KEYS");

int config_n_keys(void)
{
    return N_KEYS;
}

const char *config_key_path(int k)
{
    return config_keys[k].path;
}

int config_key_free_on_resume(int k)
{
    return (config_keys[k].flags & KEY_FREE_ON_RESUME) != 0;
}

int config_find_key(const char *path)
{
    for (int k = 0; k < N_KEYS; k++)
        if (!strcmp(config_keys[k].path, path))
            return k;
    return -1;
}

const char *config_key_name(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

/* ---- values -------------------------------------------------------------------------- */

const char *config_type_name(const KeySpec *ks)
{
    switch (ks->type) {
    case T_INT: return "integer";
    case T_REAL: return "number";
    case T_BOOL: return "boolean";
    case T_STR: return "string";
    case T_ENUM: return "choice";
    case T_INTLIST: return "list of integers";
    }
    return "?";
}

const char *config_key_type(int k)
{
    return config_type_name(&config_keys[k]);
}

int config_key_range(int k, double *min, double *max, int *min_exclusive)
{
    const KeySpec *ks = &config_keys[k];
    if (ks->type != T_INT && ks->type != T_REAL && ks->type != T_INTLIST)
        return -1;
    *min = ks->min;
    *max = ks->max >= BIG ? HUGE_VAL : ks->max;
    *min_exclusive = (ks->flags & KEY_MIN_EXCLUSIVE) != 0;
    return 0;
}

/* The index of word in a NULL-terminated list of names, or -1. */
static int choice_index(const char *const *choices, const char *word)
{
    for (int k = 0; choices[k]; k++)
        if (!strcmp(choices[k], word))
            return k;
    return -1;
}

/* "a,b,c": the choices for messages and the docs. */
void config_choice_list(const char *const *choices, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int k = 0; choices[k] && at < cap; k++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s", k ? "," : "", choices[k]);
}

/* "1 to 4096", "> 0 and at most 10", ... */
void config_range_text(const KeySpec *ks, char *out, size_t cap)
{
    char lo[32], hi[32];
    if (ks->type == T_REAL) {
        number_shortest(lo, sizeof lo, ks->min);
        number_shortest(hi, sizeof hi, ks->max);
    } else { /* counts as integers, however large */
        snprintf(lo, sizeof lo, "%.0f", ks->min);
        snprintf(hi, sizeof hi, "%.0f", ks->max);
    }
    if (ks->max >= BIG)
        snprintf(out, cap, "%s %s", ks->flags & KEY_MIN_EXCLUSIVE ? ">" : ">=", lo);
    else if (ks->flags & KEY_MIN_EXCLUSIVE)
        snprintf(out, cap, "> %s and <= %s", lo, hi);
    else
        snprintf(out, cap, "%s to %s", lo, hi);
}

/* Parses text as a value of key ks into cfg. quoted: the YAML scalar was quoted
 * (only strings may be). On failure writes "path: expected ..., got ..." into err
 * (without position) and returns -1. */
int config_parse_value(Config *cfg, const KeySpec *ks, const char *text, int quoted, Error *err)
{
    char *field = (char *)cfg + ks->offset;
    char range[96];
    if (ks->type == T_STR) {
        if (strlen(text) >= CONFIG_STR_MAX)
            return error_set(err, "%s: expected a string of at most %d bytes, got %zu", ks->path,
                             CONFIG_STR_MAX - 1, strlen(text));
        /* libyaml checks a file's text, not --set's: YAML could not write it back */
        size_t bad_at, bad_len;
        if (utf8_validate(text, strlen(text), &bad_at, &bad_len) < 0)
            return error_set(err, "%s: expected UTF-8 text, got byte 0x%02x at byte %zu", ks->path,
                             (unsigned char)text[bad_at], bad_at + 1);
        snprintf(field, CONFIG_STR_MAX, "%s", text);
        return 0;
    }
    if (quoted)
        return error_set(err, "%s: expected %s %s, got the string \"%s\"", ks->path,
                         ks->type == T_INT ? "an" : "a", config_type_name(ks), text);
    if (ks->type == T_BOOL) {
        /* YAML 1.2's core schema spellings only: "yes", "on" and friends are errors. */
        if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE"))
            *(int *)field = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE"))
            *(int *)field = 0;
        else
            return error_set(err, "%s: expected true or false, got \"%s\"", ks->path, text);
        return 0;
    }
    if (ks->type == T_ENUM) {
        int index = choice_index(ks->choices, text);
        if (index < 0) {
            char list[256];
            config_choice_list(ks->choices, list, sizeof list);
            return error_set(err, "%s: expected one of {%s}, got \"%s\"", ks->path, list, text);
        }
        *(int *)field = index;
        return 0;
    }
    config_range_text(ks, range, sizeof range);
    char *end;
    errno = 0;
    if (ks->type == T_INTLIST) {
        /* from --set or a default: "[3, 17]" or "3,17" */
        ConfigIntList *list = (ConfigIntList *)field;
        list->n = 0;
        const char *p = text;
        while (*p == ' ' || *p == '[')
            p++;
        while (*p && *p != ']') {
            long long v = strtoll(p, &end, 10);
            if (end == p || errno == ERANGE || (double)v < ks->min || (double)v > ks->max)
                return error_set(err, "%s: expected a list of integers (each %s), got \"%s\"",
                                 ks->path, range, text);
            if (list->n == CONFIG_MAX_LIST)
                return error_set(err, "%s: at most %d entries", ks->path, CONFIG_MAX_LIST);
            list->v[list->n++] = (long)v;
            p = end;
            while (*p == ' ' || *p == ',')
                p++;
        }
        return 0;
    }
    if (ks->type == T_INT) {
        long long v = strtoll(text, &end, 10);
        if (end == text || *end || errno == ERANGE || !*text)
            return error_set(err, "%s: expected an integer (%s), got \"%s\"", ks->path, range,
                             text);
        /* BIG marks "no upper limit" (the message says only ">= min"), so it is no cap */
        if ((double)v < ks->min || (ks->max < BIG && (double)v > ks->max))
            return error_set(err, "%s: %lld is out of range (expected %s)", ks->path, v, range);
        *(long *)field = (long)v;
        return 0;
    }
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(v) || !*text)
        return error_set(err, "%s: expected a finite number (%s), got \"%s\"", ks->path, range,
                         text);
    if (v < ks->min || v > ks->max || (ks->flags & KEY_MIN_EXCLUSIVE && v <= ks->min))
        return error_set(err, "%s: %s is out of range (expected %s)", ks->path, text, range);
    *(double *)field = v;
    return 0;
}

void config_key_value(const Config *cfg, int k, char *buf, size_t cap)
{
    const KeySpec *ks = &config_keys[k];
    const char *field = (const char *)cfg + ks->offset;
    switch (ks->type) {
    case T_INT: snprintf(buf, cap, "%ld", *(const long *)field); break;
    case T_REAL: number_shortest(buf, cap, *(const double *)field); break;
    case T_BOOL: snprintf(buf, cap, "%s", *(const int *)field ? "true" : "false"); break;
    case T_STR: snprintf(buf, cap, "%s", field); break;
    case T_ENUM: snprintf(buf, cap, "%s", ks->choices[*(const int *)field]); break;
    case T_INTLIST: {
        const ConfigIntList *list = (const ConfigIntList *)field;
        size_t used = (size_t)snprintf(buf, cap, "[");
        for (int e = 0; e < list->n && used < cap; e++)
            used += (size_t)snprintf(buf + used, cap - used, "%s%ld", e ? ", " : "", list->v[e]);
        if (used < cap)
            snprintf(buf + used, cap - used, "]");
        break;
    }
    }
}

void config_defaults(Config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    for (int k = 0; k < N_KEYS; k++) {
        Error err;
        int rc = config_parse_value(cfg, &config_keys[k], config_keys[k].def, 0, &err);
        (void)rc; /* the schema's defaults are valid (a test loads them) */
    }
}

