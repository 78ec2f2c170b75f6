/* path.c: absolute file names (see path.h). */
#include "base/path.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/mem.h"

char *path_absolute(const char *path)
{
    char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
    if (!cwd)
        return xstrdup(path);
    const size_t a = strlen(cwd), b = strlen(path);
    char *out = xmalloc(a + b + 2);
    memcpy(out, cwd, a);
    out[a] = '/';
    memcpy(out + a + 1, path, b + 1);
    free(cwd);
    return out;
}
