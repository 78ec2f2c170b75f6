/* qkv_example.h: the tutorials' worked example of Q/K/V attention
 * (tests/fixtures/README.md, example 1): four words, integer W_Q, W_K, W_V, scaled dot
 * product over d = 3, and its published weights and outputs. Data, shared by the
 * attention kernels' test and the self-attention layer's. */
#ifndef S2S_TESTS_QKV_EXAMPLE_H
#define S2S_TESTS_QKV_EXAMPLE_H

/* the words, one per row */
static const double QKV_WORDS[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}};
/* W_Q, W_K, W_V as the example writes them: a word's query is words[i] . W_Q */
static const double QKV_W[3][3][3] = {{{2, 0, 2}, {2, 0, 0}, {2, 1, 2}},
                                      {{2, 2, 2}, {0, 2, 1}, {0, 1, 1}},
                                      {{1, 1, 0}, {0, 1, 1}, {0, 0, 0}}};
/* softmax(Q K^T / sqrt(3)), query i by key j */
static const double QKV_WEIGHTS[4][4] = {
    {2.3608986335744746738834657e-1, 7.3898755489321947930425076e-3,
     7.4913038554468814302556842e-1, 7.3898755489321947930425076e-3},
    {4.5482632251957518394555437e-1, 4.5173677480424816054445635e-2,
     4.5482632251957518394555437e-1, 4.5173677480424816054445635e-2},
    {2.3927504868045535805345438e-1, 7.4387001505192912484078431e-4,
     7.5923721128944078369686405e-1, 7.4387001505192912484078431e-4},
    {8.9950175354197386973147310e-2, 2.8155406251633037224608556e-3,
     9.0565368480502525293909857e-1, 1.5805992156140563652932688e-3}};
/* the weights times V, one row per query */
static const double QKV_ATTENTION[4][3] = {
    {9.8522024890213561041391498e-1, 1.7417405099957559482325259e+0, 7.5652026109362033781861092e-1},
    {9.0965264503915036789110873e-1, 1.4096526450391503678911087e+0, 5.0000000000000000000000000e-1},
    {9.9851225996989614175031843e-1, 1.7584933412743888545720233e+0, 7.5998108130449271282170483e-1},
    {9.9560386015922263991224588e-1, 1.9040730855894111965738053e+0, 9.0846922543018855666155942e-1}};

#endif
