/* config_usage.c: which keys the configured model and training have no use for (see
 * config.h). One rule everywhere: such a key is never an error -- `--set
 * model.attention=dot` on a config that sets attention_size must work -- it is named
 * with why, and a resume does not compare it. */
#include <stdio.h>
#include <string.h>

#include "run/config.h"
#include "run/config_schema.h"

/* Why the key at path is unused by cfg (a sentence without its subject), or NULL. */
static const char *why_unused(const Config *cfg, const char *path)
{
    const int none = cfg->model.attention == SCORE_NONE;
    const int hard = cfg->model.attention_mode == ATTENTION_HARD && !none;
    const int image = cfg->model.encoder == CONFIG_ENCODER_IMAGE;
    const int rnn = cfg->model.encoder_cell != ENCODER_CELL_NONE && !image;
    const int no_valid = !cfg->data.valid_src[0] && !cfg->data.valid_tsv[0];
    const int transformer = cfg->model.decoder_cell == DECODER_CELL_NONE;
#define IS(p) (!strcmp(path, (p)))
#define STARTS(p) (!strncmp(path, (p), strlen(p)))
    if (cfg->data.subwords && (IS("data.valid_align") || IS("data.test_align")))
        return "with data.subwords the tokens are subword pieces, and gold links join words "
               "(training scores no AER on pieces yet)";
    if (!cfg->data.subwords && STARTS("data.subword_"))
        return "data.subwords is none";
    if (cfg->data.subword_tgt_model[0] && (IS("data.subword_vocab_size") ||
                                           IS("data.subword_type") || IS("data.subword_joint")))
        return "the models are given (data.subword_tgt_model), not learned";
    if (transformer && (IS("model.decoder_size") || IS("model.attention") ||
                        IS("model.attention_size") || IS("model.readout_size") ||
                        IS("translate.attention_mode")))
        return "the Transformer decoder (model.decoder_cell none) is embedding_size wide and "
               "attends through its own layers";
    if (IS("model.decoder_layers") && !transformer)
        return "a recurrent decoder has one layer (model.decoder_layers counts the Transformer "
               "decoder's)";
    if (IS("model.attention_size") && cfg->model.attention != SCORE_ADDITIVE &&
        cfg->model.attention != SCORE_SCALED_DOT)
        return none ? "model.attention none has no attention layer"
                    : "only the additive and scaled_dot scores have an attention layer";
    if (none && (IS("model.attention_heads") || IS("model.attention_mode") ||
                 IS("translate.attention_mode") || STARTS("alignments.")))
        return "model.attention none has no attention weights";
    if (IS("model.self_attention_layers") && none && rnn)
        return "model.attention none reads no annotations, only the encoder's final states";
    if ((IS("model.self_attention_heads") || IS("model.self_attention_ffn") ||
         IS("model.self_attention_dropout")) && config_model_dims(cfg, 1, 1).sa_layers == 0 &&
        !(transformer && !IS("model.self_attention_heads")))
        return "the model has no self-attention layers";
    if (image && (IS("model.encoder_cell") || IS("model.encoder_size") ||
                  IS("model.encoder_layers") || IS("data.src_vocab_size") ||
                  IS("data.src_min_freq") || IS("translate.max_source_length") ||
                  IS("data.valid_align") || IS("data.test_align") || IS("data.tsv_reverse")))
        return "an image model has no source text (model.encoder: image)";
    if (!image && (STARTS("data.image_") || IS("model.conv_channels") ||
                   STARTS("model.grid_position") || STARTS("data.train_ground") ||
                   IS("training.attention_supervision") ||
                   IS("data.valid_ground") || IS("data.test_ground")))
        return "a text model has no pictures (model.encoder: text)";
    if ((IS("model.encoder_size") || IS("model.encoder_layers")) && !rnn)
        return "model.encoder_cell none has no recurrent encoder";
    if ((IS("model.context_gate") || IS("training.doubly_stochastic") ||
         IS("training.attention_supervision")) && none)
        return "model.attention none has no attention weights";
    if (STARTS("training.hard_") && !hard)
        return "only hard attention samples (model.attention_mode: hard)";
    if (IS("training.average_last") && no_valid)
        return "without a validation set nothing is averaged";
    if (STARTS("training.adam_") && cfg->training.optimizer != OPTIMIZER_ADAM)
        return "the optimizer is not adam";
    if (STARTS("training.adadelta_") && cfg->training.optimizer != OPTIMIZER_ADADELTA)
        return "the optimizer is not adadelta";
    if ((IS("training.patience") || IS("training.decrease_factor") ||
         IS("training.learning_rate_min")) && cfg->training.scheduling != SCHEDULING_PLATEAU)
        return no_valid ? "without a validation set nothing is scheduled"
                        : "training.scheduling is not plateau";
#undef IS
#undef STARTS
    return NULL;
}

const char *config_key_unused(const Config *cfg, int k)
{
    return why_unused(cfg, config_keys[k].path);
}

int config_unused_keys(const Config *cfg, int *keys, int cap)
{
    Config defaults;
    config_defaults(&defaults);
    int n = 0;
    for (int k = 0; k < config_n_keys(); k++) {
        if (!why_unused(cfg, config_keys[k].path) || cfg->origin.line[k] == 0)
            continue;
        char value[CONFIG_STR_MAX + 64], def[CONFIG_STR_MAX + 64];
        config_key_value(cfg, k, value, sizeof value);
        config_key_value(&defaults, k, def, sizeof def);
        if (strcmp(value, def) && n < cap)
            keys[n++] = k;
    }
    return n;
}

void config_unused_note(const Config *cfg, int k, char *out, size_t cap)
{
    char value[CONFIG_STR_MAX + 64], where[CONFIG_STR_MAX + 48] = "--set ";
    config_key_value(cfg, k, value, sizeof value);
    if (cfg->origin.line[k] > 0) /* where errors point: FILE:LINE:COL */
        snprintf(where, sizeof where, "%.1000s:%d:%d: ", cfg->origin.file, cfg->origin.line[k],
                 cfg->origin.col[k]);
    snprintf(out, cap, "%s%s: %.200s is not used: %s", where, config_keys[k].path, value,
             why_unused(cfg, config_keys[k].path));
}
