/* weight_average.h: the mean of the weights at the last K validations (training.
 * average_last), which validation scores and best.ckpt keeps in place of the weights of
 * the moment. Averaging the checkpoints of a run's end smooths the noise of its last
 * updates (Junczys-Dowmunt et al. 2016; Joey NMT's and fairseq's average_checkpoints
 * scripts do it after training); doing it at each validation lets early stopping and
 * best.ckpt judge the average itself. Training goes on from the weights of the moment. */
#ifndef S2S_WEIGHT_AVERAGE_H
#define S2S_WEIGHT_AVERAGE_H

#include <stddef.h>

typedef struct {
    int k;          /* snapshots the mean covers (training.average_last) */
    int count;      /* snapshots held: min(k, validations so far) */
    int oldest;     /* slot of the oldest snapshot */
    size_t n;       /* floats in a snapshot */
    float *ring;    /* (k, n): slot s holds a snapshot, oldest first from `oldest` */
} WeightAverage;

/* Room for k snapshots of n floats, none held. */
void weight_average_init(WeightAverage *a, int k, size_t n);
/* A checkpoint's ring holds room for only the snapshots it has (a file cannot make its
 * reader allocate more than it holds): this gives it room for k before any push. */
void weight_average_make_room(WeightAverage *a);
void weight_average_free(WeightAverage *a);
/* Adds a snapshot of w (n floats), dropping the oldest when k are held. */
void weight_average_push(WeightAverage *a, const float *w);
/* The i-th snapshot held, oldest first (0 <= i < count). */
const float *weight_average_snapshot(const WeightAverage *a, int i);
/* out (n floats) = the mean of the snapshots held, each element summed oldest first in
 * double and rounded once, so a run and its resume (which reloads the snapshots in that
 * order) get the same bits. Needs count >= 1. */
void weight_average_mean(const WeightAverage *a, float *out);

#endif
