/* commbench's MPI call logger (not OSU's code): preloaded into the unmodified OMB
 * binaries, it writes every listed MPI call with its byte count to /tmp/osutrace/out.<rank>
 * (tests/data/osu/README.md: how the osu family's procedure was read off them). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static FILE *f;
static void open_f(void){ if(!f){int r; PMPI_Comm_rank(MPI_COMM_WORLD,&r); char n[64]; snprintf(n,64,"/tmp/osutrace/out.%d",r); f=fopen(n,"w");}}
#define LOG(...) do{ if(f) fprintf(f, __VA_ARGS__);}while(0)
int MPI_Init(int *a, char ***b){int r=PMPI_Init(a,b); open_f(); return r;}
int MPI_Init_thread(int *a, char ***b, int q, int *p){int r=PMPI_Init_thread(a,b,q,p); open_f(); return r;}
int MPI_Send(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm){int s;PMPI_Type_size(t,&s);LOG("Send %d %d tag%d\n",c*s,d,tag);return PMPI_Send(buf,c,t,d,tag,comm);}
int MPI_Recv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Status *st){int s;PMPI_Type_size(t,&s);LOG("Recv %d %d tag%d\n",c*s,d,tag);return PMPI_Recv(buf,c,t,d,tag,comm,st);}
int MPI_Isend(const void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){int s;PMPI_Type_size(t,&s);LOG("Isend %d %d tag%d\n",c*s,d,tag);return PMPI_Isend(buf,c,t,d,tag,comm,q);}
int MPI_Irecv(void *buf,int c,MPI_Datatype t,int d,int tag,MPI_Comm comm,MPI_Request*q){int s;PMPI_Type_size(t,&s);LOG("Irecv %d %d tag%d\n",c*s,d,tag);return PMPI_Irecv(buf,c,t,d,tag,comm,q);}
int MPI_Wait(MPI_Request*q,MPI_Status*s){LOG("Wait\n");return PMPI_Wait(q,s);}
int MPI_Waitall(int n,MPI_Request*q,MPI_Status*s){LOG("Waitall %d\n",n);return PMPI_Waitall(n,q,s);}
int MPI_Barrier(MPI_Comm c){LOG("Barrier\n");return PMPI_Barrier(c);}
double MPI_Wtime(void){LOG("Wtime\n");return PMPI_Wtime();}
int MPI_Reduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,int r,MPI_Comm m){LOG("Reduce %d\n",c);return PMPI_Reduce(a,b,c,t,o,r,m);}
int MPI_Allreduce(const void*a,void*b,int c,MPI_Datatype t,MPI_Op o,MPI_Comm m){LOG("Allreduce %d\n",c);return PMPI_Allreduce(a,b,c,t,o,m);}
int MPI_Gather(const void*a,int c,MPI_Datatype t,void*b,int c2,MPI_Datatype t2,int r,MPI_Comm m){LOG("Gather %d\n",c);return PMPI_Gather(a,c,t,b,c2,t2,r,m);}
int MPI_Bcast(void*a,int c,MPI_Datatype t,int r,MPI_Comm m){LOG("Bcast %d\n",c);return PMPI_Bcast(a,c,t,r,m);}
int MPI_Finalize(void){if(f)fclose(f);f=0;return PMPI_Finalize();}
