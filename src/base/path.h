/* path.h: file names made absolute, for records that name a file and are read elsewhere
 * (the pictures of an image model's alignments.jsonl). */
#ifndef S2S_PATH_H
#define S2S_PATH_H

/* path as an absolute path: itself if it starts with '/', else the working directory, a
 * '/' and path (not resolved further: no link is followed). Returns a malloc'd string,
 * or a copy of path if the working directory cannot be had. */
char *path_absolute(const char *path);

#endif
